#include "demi/layers/prelu_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// out = in where x > 0, else a[c] in, with channel c = (i / dim) % channels
/// (channels = 1 when the slope is shared): y from x (in = x) and dx from dy
/// (in = dy). In place works.
__global__ void PReLUKernel(int64_t n, int64_t channels, int64_t dim, const float* slope,
                            const float* x, const float* in, float* out) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const float a = slope[(i / dim) % channels];
    out[i] = x[i] > 0 ? in[i] : a * in[i];
  }
}

/// The term of the slope gradient: dy x where x <= 0.
struct SlopeTerm {
  const float* x;
  const float* dy;
  __device__ double operator()(int64_t i) const {
    return x[i] <= 0 ? static_cast<double>(dy[i]) * x[i] : 0.0;
  }
};

}  // namespace

// launchers

void PReLULayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  SaveInput(*bottom[0]);
  if (n == 0) return;
  const int64_t channels = channel_shared_ ? 1 : bottom[0]->shape(1);
  const float* x = bottom[0]->gpu_data();
  Launch("PReLUKernel", CudaBlocks(n), PReLUKernel, n, channels, bottom[0]->count(2),
         blobs_[0]->gpu_data(), x, x, top[0]->mutable_gpu_data());
}

void PReLULayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  // A shared slope sees the whole blob as one channel of num x C*dim.
  const int64_t channels = channel_shared_ ? 1 : bottom[0]->shape(1);
  const int64_t dim = channel_shared_ ? bottom[0]->count(1) : bottom[0]->count(2);
  const int64_t num = bottom[0]->shape(0);
  const float* x = Input(*bottom[0]).gpu_data();
  const float* dy = top[0]->gpu_diff();
  // The slope gradient first: in place, dx overwrites dy.
  if (param_propagate_down(0)) {
    GpuChannelSums(num, channels, dim, true, SlopeTerm{x, dy}, blobs_[0]->mutable_gpu_diff());
  }
  if (!propagate_down[0]) return;
  Launch("PReLUKernel", CudaBlocks(n), PReLUKernel, n, channels, dim, blobs_[0]->gpu_data(), x, dy,
         bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
