#include "demi/layers/loss_kernels.cuh"

namespace demi {

namespace {

// kernels

__global__ void ScaledLossGradientKernel(int64_t n, float sign, const float* weight,
                                         const float* normalizer, float fixed_divisor,
                                         const float* saved, float* dx) {
  const float scale = sign * *weight / (normalizer != nullptr ? *normalizer : fixed_divisor);
  ElementwiseInto(n, dx, [=](int64_t i) { return scale * saved[i]; });
}

}  // namespace

// launchers

void GpuScaledLossGradient(int64_t n, float sign, const float* weight, const float* normalizer,
                           float fixed_divisor, const float* saved, float* dx) {
  if (n == 0) return;
  Launch("ScaledLossGradientKernel", ElementwiseBlocks(n), ScaledLossGradientKernel, n, sign,
         weight, normalizer, fixed_divisor, saved, dx);
}

}  // namespace demi
