#include <cmath>

#include "demi/layers/sigmoid_cross_entropy_loss_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// Per element: the loss term, 1 where counted (0 where ignored), and the
/// unscaled gradient sigmoid(x) - t, as the CPU computes them. The sums come
/// afterwards, in cuBLAS's fixed order rather than with atomics.
__global__ void SigmoidCrossEntropyKernel(int64_t n, bool has_ignore_label, int64_t ignore_label,
                                          const float* x, const float* t, float* loss,
                                          float* counted, float* gradient) {
  for (int64_t k = GridStart(); k < n; k += GridStride()) {
    if (has_ignore_label && static_cast<int64_t>(t[k]) == ignore_label) {
      loss[k] = 0.0f;
      counted[k] = 0.0f;
      gradient[k] = 0.0f;
      continue;
    }
    loss[k] = fmaxf(x[k], 0.0f) - x[k] * t[k] + log1pf(expf(-fabsf(x[k])));
    counted[k] = 1.0f;
    gradient[k] = 0.5f * tanhf(0.5f * x[k]) + 0.5f - t[k];
  }
}

}  // namespace

// launchers

void SigmoidCrossEntropyLossLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                               const std::vector<Blob*>& top) {
  const int64_t count = bottom[0]->count();
  double loss = 0;
  int64_t valid = 0;
  if (count > 0) {
    terms_.Reshape(std::vector<int64_t>{2, count});
    float* loss_terms = terms_.mutable_gpu_data();
    float* counted = loss_terms + count;
    Launch("SigmoidCrossEntropyKernel", CudaBlocks(count), SigmoidCrossEntropyKernel, count,
           has_ignore_label_, ignore_label_, bottom[0]->gpu_data(), bottom[1]->gpu_data(),
           loss_terms, counted, gradient_.mutable_gpu_data());
    // A dot with the 0/1 flags: terms may be negative for targets outside [0, 1].
    loss = GpuDot(count, loss_terms, counted);
    valid = std::llround(GpuAsum(count, counted));
  }
  const int64_t outer = bottom[0]->shape(0);
  normalizer_ = WriteNormalizedLoss(
      loss, Normalizer(normalization_, outer, outer > 0 ? count / outer : 0, valid), top[0]);
}

}  // namespace demi
