#include "demi/layers/scale_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// y[o, d, j] = x[o, d, j] s[d] (+ b[d]); `b` may be null. In place works.
__global__ void ScaleForwardKernel(int64_t n, ChannelOf channel_of, const float* x, const float* s,
                                   const float* b, float* y) {
  ElementwiseInto(n, y, [=](int64_t i) {
    const int64_t d = channel_of(i);
    return x[i] * s[d] + (b ? b[d] : 0.0f);
  });
}

/// dx[o, d, j] = dy[o, d, j] s[d]; in place works.
__global__ void ScaleBackwardKernel(int64_t n, ChannelOf channel_of, const float* dy,
                                    const float* s, float* dx) {
  ElementwiseInto(n, dx, [=](int64_t i) { return dy[i] * s[channel_of(i)]; });
}

/// The terms of the bias and scale gradients, taken in one pass: dy and dy x.
struct BiasAndScaleTerms {
  const float* dy;
  const float* x;
  __device__ DoublePair operator()(int64_t i) const {
    return {static_cast<double>(dy[i]), static_cast<double>(dy[i]) * x[i]};
  }
};

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

void ScaleLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  const float* x = bottom[0]->gpu_data();
  if (in_place_ && !input_shared_ && runs_backward()) {
    // y overwrites x, and Backward needs x for ds.
    GpuCopy(n, x, input_.mutable_gpu_data());
  }
  if (n == 0) return;
  const float* s = (bottom.size() == 2 ? bottom[1] : blobs_[0].get())->gpu_data();
  const float* b = bias_index_ >= 0 ? blobs_[bias_index_]->gpu_data() : nullptr;
  Launch("ScaleForwardKernel", ElementwiseBlocks(n), ScaleForwardKernel, n,
         ChannelOf(inner_, scale_dim_), x, s, b, top[0]->mutable_gpu_data());
}

void ScaleLayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  const float* dy = top[0]->gpu_diff();
  const bool scale_is_param = bottom.size() == 1;
  const bool bias_grad = bias_index_ >= 0 && param_propagate_down(bias_index_);
  const bool scale_grad = scale_is_param ? param_propagate_down(0) : propagate_down[1];
  // Before dx: in place, dx overwrites dy. A param gradient accumulates;
  // bottom 1's gradient is written.
  const float* x = nullptr;
  float* ds = nullptr;
  if (scale_grad) {
    x = in_place_ ? input_.gpu_data() : bottom[0]->gpu_data();
    ds = (scale_is_param ? blobs_[0].get() : bottom[1])->mutable_gpu_diff();
  }
  if (bias_grad && scale_grad) {  // both sums in one pass over dy
    GpuChannelReduce<DoublePair>(
        outer_, scale_dim_, inner_, BiasAndScaleTerms{dy, x},
        StoreBiasAndScaleSums{{blobs_[bias_index_]->mutable_gpu_diff(), true},
                              {ds, scale_is_param}});
  } else if (bias_grad) {
    GpuChannelSums(outer_, scale_dim_, inner_, true, GradientTerm{dy, nullptr},
                   blobs_[bias_index_]->mutable_gpu_diff());
  } else if (scale_grad) {
    GpuChannelSums(outer_, scale_dim_, inner_, scale_is_param, GradientTerm{dy, x}, ds);
  }
  const int64_t n = top[0]->count();
  if (propagate_down[0] && n > 0) {
    const float* s = (scale_is_param ? blobs_[0].get() : bottom[1])->gpu_data();
    Launch("ScaleBackwardKernel", ElementwiseBlocks(n), ScaleBackwardKernel, n,
           ChannelOf(inner_, scale_dim_), dy, s, bottom[0]->mutable_gpu_diff());
  }
}

}  // namespace demi
