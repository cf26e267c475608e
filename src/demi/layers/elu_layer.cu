#include "demi/layers/elu_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

__global__ void ELUForwardKernel(int64_t n, float alpha, const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    y[i] = x[i] > 0 ? x[i] : alpha * expm1f(x[i]);
  }
}

/// Reads the top: for alpha >= 0, y > 0 exactly where x > 0, and
/// alpha exp(x) = y + alpha elsewhere.
__global__ void ELUBackwardKernel(int64_t n, float alpha, const float* y, const float* dy,
                                  float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    dx[i] = y[i] > 0 ? dy[i] : dy[i] * (y[i] + alpha);
  }
}

}  // namespace

// launchers

void ELULayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  ELUForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, alpha_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CheckLaunch("ELUForwardKernel");
}

void ELULayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
  ELUBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, alpha_, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CheckLaunch("ELUBackwardKernel");
}

}  // namespace demi
