#include "demi/layers/cudnn_ops.hpp"
#include "demi/layers/tanh_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

__global__ void TanHForwardKernel(int64_t n, const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = tanhf(x[i]);
}

__global__ void TanHBackwardKernel(int64_t n, const float* y, const float* dy, float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

}  // namespace

// launchers

void TanHLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
#ifdef USE_CUDNN
  if (WantsCudnn(layer_param_.tanh_param().engine())) {
    CudnnActivationForward(CUDNN_ACTIVATION_TANH, n, bottom[0]->gpu_data(),
                           top[0]->mutable_gpu_data());
    return;
  }
#endif
  TanHForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, bottom[0]->gpu_data(),
                                                                      top[0]->mutable_gpu_data());
  CheckLaunch("TanHForwardKernel");
}

void TanHLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
#ifdef USE_CUDNN
  if (WantsCudnn(layer_param_.tanh_param().engine())) {
    CudnnActivationBackward(CUDNN_ACTIVATION_TANH, n, top[0]->gpu_data(), top[0]->gpu_diff(),
                            bottom[0]->mutable_gpu_diff());
    return;
  }
#endif
  TanHBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CheckLaunch("TanHBackwardKernel");
}

}  // namespace demi
