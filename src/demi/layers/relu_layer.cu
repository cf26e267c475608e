#include "demi/layers/cudnn_ops.hpp"
#include "demi/layers/relu_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

__global__ void ReLUForwardKernel(int64_t n, float slope, const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = x[i] > 0 ? x[i] : slope * x[i];
}

/// Reads the top: y > 0 exactly where x > 0, so in place works.
__global__ void ReLUBackwardKernel(int64_t n, float slope, const float* y, const float* dy,
                                   float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) dx[i] = y[i] > 0 ? dy[i] : slope * dy[i];
}

}  // namespace

// launchers

void ReLULayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float slope = layer_param_.relu_param().negative_slope();
  DEMI_CHECK(slope >= 0, "ReLU layer '", layer_param_.name(),
             "' needs a non-negative negative_slope, got ", slope);
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
#ifdef USE_CUDNN
  if (slope == 0 && WantsCudnn(layer_param_.relu_param().engine(), context_)) {
    CudnnActivationForward(CUDNN_ACTIVATION_RELU, n, bottom[0]->gpu_data(),
                           top[0]->mutable_gpu_data());
    return;
  }
#endif
  ReLUForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, slope, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CheckLaunch("ReLUForwardKernel");
}

void ReLULayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
#ifdef USE_CUDNN
  if (layer_param_.relu_param().negative_slope() == 0 &&
      WantsCudnn(layer_param_.relu_param().engine(), context_)) {
    CudnnActivationBackward(CUDNN_ACTIVATION_RELU, n, top[0]->gpu_data(), top[0]->gpu_diff(),
                            bottom[0]->mutable_gpu_diff());
    return;
  }
#endif
  ReLUBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, layer_param_.relu_param().negative_slope(), top[0]->gpu_data(), top[0]->gpu_diff(),
      bottom[0]->mutable_gpu_diff());
  CheckLaunch("ReLUBackwardKernel");
}

}  // namespace demi
