#include "demi/layers/exp_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// base^(shift + scale x) = base^shift exp(scale ln(base) x).
__global__ void ExpForwardKernel(int64_t n, float inner_scale, float outer_scale, const float* x,
                                 float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    y[i] = outer_scale * expf(inner_scale * x[i]);
  }
}

__global__ void ExpBackwardKernel(int64_t n, float inner_scale, const float* y, const float* dy,
                                  float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) dx[i] = dy[i] * y[i] * inner_scale;
}

}  // namespace

// launchers

void ExpLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  ExpForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, inner_scale_, outer_scale_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CheckLaunch("ExpForwardKernel");
}

void ExpLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
  ExpBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, inner_scale_, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CheckLaunch("ExpBackwardKernel");
}

}  // namespace demi
