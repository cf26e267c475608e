#include "demi/layers/threshold_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

__global__ void ThresholdForwardKernel(int64_t n, float threshold, const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = x[i] > threshold ? 1.0f : 0.0f;
}

}  // namespace

// launchers

void ThresholdLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  Launch("ThresholdForwardKernel", CudaBlocks(n), ThresholdForwardKernel, n,
         layer_param_.threshold_param().threshold(), bottom[0]->gpu_data(),
         top[0]->mutable_gpu_data());
}

void ThresholdLayer::Backward_gpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  // No gradient to compute: only the CPU code's check that none is asked for.
  Backward_cpu(top, propagate_down, bottom);
}

}  // namespace demi
