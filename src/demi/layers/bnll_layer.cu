#include "demi/layers/bnll_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// x + log(1 + exp(-x)) for x > 0, so that exp never overflows.
__global__ void BNLLForwardKernel(int64_t n, const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    y[i] = x[i] > 0 ? x[i] + log1pf(expf(-x[i])) : log1pf(expf(x[i]));
  }
}

/// dy/dx = sigmoid(x) = 1 - exp(-y), read from the top.
__global__ void BNLLBackwardKernel(int64_t n, const float* y, const float* dy, float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) dx[i] = -expm1f(-y[i]) * dy[i];
}

}  // namespace

// launchers

void BNLLLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  BNLLForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, bottom[0]->gpu_data(),
                                                                      top[0]->mutable_gpu_data());
  CheckLaunch("BNLLForwardKernel");
}

void BNLLLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
  BNLLBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CheckLaunch("BNLLBackwardKernel");
}

}  // namespace demi
