#include "demi/layers/prelu_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

// kernels

/// out = in where x > 0, else a[c] in, with channel c = (i / dim) % channels
/// (channels = 1 when the slope is shared): y from x (in = x) and dx from dy
/// (in = dy), stored in T, computed in float. In place works.
template <typename T>
__global__ void PReLUKernel(int64_t n, int64_t channels, int64_t dim, const float* slope,
                            const T* x, const T* in, T* out) {
  ElementwiseStore(n, out, [=](int64_t i) {
    const float v = Widen(in[i]);
    return Widen(x[i]) > 0 ? v : slope[(i / dim) % channels] * v;
  });
}

/// The term of the slope gradient: dy x where x <= 0, both stored in T.
template <typename T>
struct SlopeTerm {
  const T* x;
  const T* dy;
  __device__ double operator()(int64_t i) const {
    const float v = Widen(x[i]);
    return v <= 0 ? static_cast<double>(Widen(dy[i])) * v : 0.0;
  }
};

}  // namespace

// launchers

void PReLULayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  SaveInput(*bottom[0]);
  if (n == 0) return;
  const ChannelBlocks t = Channels(*bottom[0]);
  VisitStorageType(top[0]->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = GpuDataAs<T>(*bottom[0]);
    Launch("PReLUKernel", ElementwiseBlocks(n), PReLUKernel<T>, n, t.channels, t.inner,
           blobs_[0]->gpu_data(), x, x, MutableGpuDataAs<T>(top[0]));
  });
}

void PReLULayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  const ChannelBlocks t = Channels(*bottom[0]);
  VisitStorageType(bottom[0]->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = GpuDataAs<T>(Input(*bottom[0]));
    const T* dy = GpuDiffAs<T>(*top[0]);
    // The slope gradient first: in place, dx overwrites dy.
    if (param_propagate_down(0)) {
      GpuChannelSums(t.outer, t.channels, t.inner, true, SlopeTerm<T>{x, dy},
                     blobs_[0]->mutable_gpu_diff());
    }
    if (!propagate_down[0]) return;
    Launch("PReLUKernel", ElementwiseBlocks(n), PReLUKernel<T>, n, t.channels, t.inner,
           blobs_[0]->gpu_data(), x, dy, MutableGpuDiffAs<T>(bottom[0]));
  });
}

}  // namespace demi
