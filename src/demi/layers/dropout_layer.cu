#include "demi/layers/dropout_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math.hpp"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// Turns the uniform draws u into the scaled mask (u >= ratio keeps the
/// element), in place, and applies it: y = x * mask.
__global__ void DropoutForwardKernel(int64_t n, float ratio, float scale, const float* x,
                                     float* mask, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const float m = mask[i] >= ratio ? scale : 0.0f;
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

}  // namespace

// launchers

void DropoutLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t count = bottom[0]->count();
  if (phase_ != TRAIN) {
    if (top[0] != bottom[0]) GpuCopy(count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
    return;
  }
  // Drawn on the host from the layer's stream, as the CPU code does, so both
  // devices drop the same elements.
  RngUniform(count, 0.0f, 1.0f, mask_.mutable_cpu_data(), rng());
  if (count == 0) return;
  Launch("DropoutForwardKernel", CudaBlocks(count), DropoutForwardKernel, count, ratio_, scale_,
         bottom[0]->gpu_data(), mask_.mutable_gpu_data(), top[0]->mutable_gpu_data());
}

}  // namespace demi
