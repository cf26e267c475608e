#include "demi/layers/scale_layer.hpp"
#include "demi/util/convert_gpu.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

// kernels: written once over the type T the bottom and top are stored in
// (float, float16, bfloat16), in float arithmetic; scale and bias are FLOAT.

/// y[o, d, j] = x[o, d, j] s[d] (+ b[d]); `b` may be null. In place works.
template <typename T>
__global__ void ScaleForwardKernel(int64_t n, ChannelOf channel_of, const T* x, const float* s,
                                   const float* b, T* y) {
  ElementwiseStore(n, y, [=](int64_t i) {
    const int64_t d = channel_of(i);
    return Widen(x[i]) * s[d] + (b ? b[d] : 0.0f);
  });
}

/// dx[o, d, j] = dy[o, d, j] s[d]; in place works.
template <typename T>
__global__ void ScaleBackwardKernel(int64_t n, ChannelOf channel_of, const T* dy, const float* s,
                                    T* dx) {
  ElementwiseStore(n, dx, [=](int64_t i) { return Widen(dy[i]) * s[channel_of(i)]; });
}

/// db[c] += the sum of dy; ds[c] (+)= the sum of dy x.
struct StoreBiasAndScaleSums {
  StoreChannelSum bias, scale;
  __device__ void operator()(int64_t c, const DoublePair& total) const {
    bias(c, total.a);
    scale(c, total.b);
  }
};

}  // namespace

// launchers

ChannelAxis ScaleLayer::AxisOnGpu(const Blob& blob) const {
  // Channels last only per channel (outer N, inner H x W).
  if (blob.channels_last()) return ChannelAxis{outer_ * inner_, scale_dim_, 1};
  return ChannelAxis{outer_, scale_dim_, inner_};
}

void ScaleLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  const Type type = bottom[0]->storage_type();
  if (in_place_ && !input_shared_ && runs_backward()) {
    // y overwrites x, and Backward needs x for ds.
    GpuConvert(n, type, bottom[0]->data()->gpu_data(), type, input_.data()->mutable_gpu_data());
  }
  if (n == 0) return;
  const float* s = (bottom.size() == 2 ? bottom[1] : blobs_[0].get())->gpu_data();
  const float* b = bias_index_ >= 0 ? blobs_[bias_index_]->gpu_data() : nullptr;
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    Launch("ScaleForwardKernel", ElementwiseBlocks(n), ScaleForwardKernel<T>, n,
           AxisOnGpu(*bottom[0]).channel_of(), GpuDataAs<T>(*bottom[0]), s, b,
           MutableGpuDataAs<T>(top[0]));
  });
}

void ScaleLayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  const ChannelAxis axis = AxisOnGpu(*top[0]);
  VisitStorageType(top[0]->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* dy = GpuDiffAs<T>(*top[0]);
    const bool scale_is_param = bottom.size() == 1;
    const bool bias_grad = bias_index_ >= 0 && param_propagate_down(bias_index_);
    const bool scale_grad = scale_is_param ? param_propagate_down(0) : propagate_down[1];
    // Before dx: in place, dx overwrites dy. A param gradient accumulates;
    // bottom 1's gradient is written.
    const T* x = nullptr;
    float* ds = nullptr;
    if (scale_grad) {
      x = GpuDataAs<T>(in_place_ ? input_ : *bottom[0]);
      ds = (scale_is_param ? blobs_[0].get() : bottom[1])->mutable_gpu_diff();
    }
    if (bias_grad && scale_grad) {  // both sums in one pass over dy
      GpuChannelReduce<DoublePair>(
          axis.outer, axis.channels, axis.inner, StoredGradientPair<T>{dy, x},
          StoreBiasAndScaleSums{{blobs_[bias_index_]->mutable_gpu_diff(), true},
                                {ds, scale_is_param}});
    } else if (bias_grad) {
      GpuChannelSums(axis.outer, axis.channels, axis.inner, true,
                     StoredGradientTerm<T>{dy, nullptr}, blobs_[bias_index_]->mutable_gpu_diff());
    } else if (scale_grad) {
      GpuChannelSums(axis.outer, axis.channels, axis.inner, scale_is_param,
                     StoredGradientTerm<T>{dy, x}, ds);
    }
    const int64_t n = top[0]->count();
    if (propagate_down[0] && n > 0) {
      const float* s = (scale_is_param ? blobs_[0].get() : bottom[1])->gpu_data();
      Launch("ScaleBackwardKernel", ElementwiseBlocks(n), ScaleBackwardKernel<T>, n,
             axis.channel_of(), dy, s, MutableGpuDiffAs<T>(bottom[0]));
    }
  });
}

}  // namespace demi
