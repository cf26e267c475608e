#include <cmath>

#include "demi/layers/loss_kernels.cuh"
#include "demi/layers/sigmoid_cross_entropy_loss_layer.hpp"

namespace demi {

namespace {

// kernels

/// Per element: the loss term, 1 where counted (0 where ignored), and the
/// unscaled gradient sigmoid(x) - t, as the CPU computes them. The sums come
/// afterwards, in a fixed order rather than with atomics.
__global__ void SigmoidCrossEntropyKernel(int64_t n, bool has_ignore_label, int64_t ignore_label,
                                          const float* x, const float* t, float* loss,
                                          float* counted, float* gradient) {
  for (int64_t k = GridStart(); k < n; k += GridStride()) {
    if (has_ignore_label && ClassLabel(t[k]) == ignore_label) {
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

/// An element's loss term (a) and whether it counts (b); the terms may be
/// negative for targets outside [0, 1], so the count is a flag of its own.
struct CountedLossTerm {
  const float* loss;
  const float* counted;
  __device__ DoublePair operator()(int64_t k) const { return DoublePair{loss[k], counted[k]}; }
};

}  // namespace

// launchers

void SigmoidCrossEntropyLossLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                               const std::vector<Blob*>& top) {
  // The loss and its normalizer stay on the device, where Backward_gpu
  // reads the normalizer.
  const int64_t count = bottom[0]->count();
  const float* loss_terms = nullptr;
  const float* counted = nullptr;
  if (count > 0) {
    terms_.Reshape(std::vector<int64_t>{2, count});
    float* terms = terms_.mutable_gpu_data();
    Launch("SigmoidCrossEntropyKernel", CudaBlocks(count), SigmoidCrossEntropyKernel, count,
           has_ignore_label_, ignore_label_, bottom[0]->gpu_data(), bottom[1]->gpu_data(), terms,
           terms + count, gradient_.mutable_gpu_data());
    loss_terms = terms;
    counted = terms + count;
  }
  const int64_t outer = bottom[0]->shape(0);
  const float fixed = normalization_ == LossParameter::VALID
                          ? 0.0f
                          : Normalizer(normalization_, outer, outer > 0 ? count / outer : 0, 0);
  device_normalizer_.Resize(sizeof(float));
  GpuChannelReduce<DoublePair>(
      1, 1, count, CountedLossTerm{loss_terms, counted},
      FinishNormalizedLoss{fixed, top[0]->mutable_gpu_data(),
                           static_cast<float*>(device_normalizer_.mutable_gpu_data())});
}

void SigmoidCrossEntropyLossLayer::Backward_gpu(const std::vector<Blob*>& top,
                                                const std::vector<bool>& propagate_down,
                                                const std::vector<Blob*>& bottom) {
  BackwardFromSavedOnGpu(top, propagate_down, bottom, "targets", gradient_, &device_normalizer_);
}

}  // namespace demi
