#include "demi/layers/cudnn_ops.hpp"
#include "demi/layers/sigmoid_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// 1 / (1 + exp(-x)) through tanh, as on the CPU, which never overflows.
__global__ void SigmoidForwardKernel(int64_t n, const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = 0.5f * tanhf(0.5f * x[i]) + 0.5f;
}

__global__ void SigmoidBackwardKernel(int64_t n, const float* y, const float* dy, float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
}

}  // namespace

// launchers

void SigmoidLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
#ifdef USE_CUDNN
  if (WantsCudnn(layer_param_.sigmoid_param().engine(), context_)) {
    CudnnActivationForward(CUDNN_ACTIVATION_SIGMOID, n, bottom[0]->gpu_data(),
                           top[0]->mutable_gpu_data());
    return;
  }
#endif
  SigmoidForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CheckLaunch("SigmoidForwardKernel");
}

void SigmoidLayer::Backward_gpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
#ifdef USE_CUDNN
  if (WantsCudnn(layer_param_.sigmoid_param().engine(), context_)) {
    CudnnActivationBackward(CUDNN_ACTIVATION_SIGMOID, n, top[0]->gpu_data(), top[0]->gpu_diff(),
                            bottom[0]->mutable_gpu_diff());
    return;
  }
#endif
  SigmoidBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CheckLaunch("SigmoidBackwardKernel");
}

}  // namespace demi
