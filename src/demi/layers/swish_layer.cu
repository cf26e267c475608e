#include "demi/layers/swish_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// 1 / (1 + exp(-z)) through tanh, as on the CPU, which never overflows.
__device__ inline float Sigmoid(float z) { return 0.5f * tanhf(0.5f * z) + 0.5f; }

__global__ void SwishForwardKernel(int64_t n, float beta, const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = x[i] * Sigmoid(beta * x[i]);
}

/// Recomputes s = sigmoid(beta x) from the input: dx = dy (s + beta x s (1 - s)).
__global__ void SwishBackwardKernel(int64_t n, float beta, const float* x, const float* dy,
                                    float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const float s = Sigmoid(beta * x[i]);
    dx[i] = dy[i] * (s + beta * x[i] * s * (1.0f - s));
  }
}

}  // namespace

// launchers

void SwishLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (in_place_ && runs_backward()) {
    GpuCopy(n, bottom[0]->gpu_data(), bottom_copy_.mutable_gpu_data());
  }
  if (n == 0) return;
  SwishForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, layer_param_.swish_param().beta(), bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CheckLaunch("SwishForwardKernel");
}

void SwishLayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
  const float* x = in_place_ ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
  SwishBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, layer_param_.swish_param().beta(), x, top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CheckLaunch("SwishBackwardKernel");
}

}  // namespace demi
