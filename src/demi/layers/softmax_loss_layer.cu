#include <cfloat>
#include <cstdint>

#include "demi/layers/loss_kernels.cuh"
#include "demi/layers/softmax_loss_layer.hpp"

namespace demi {

namespace {

// kernels

/// Marks a position whose label counts nothing (no loss can be -1: p <= 1).
constexpr float kUncounted = -1.0f;

/// One thread per (outer i, inner j) position: its loss -log p[label], and
/// p - onehot(label) in place of p; a zero column where the label is ignored,
/// its loss kUncounted. A label outside the classes is the same, and is
/// recorded in *bad_label (BadLabelRecord). A NaN p gives a NaN loss, as std::max keeps it on
/// the CPU (fmaxf would not).
__global__ void SoftmaxLossKernel(int64_t positions, int64_t channels, int64_t inner,
                                  bool has_ignore_label, int64_t ignore_label, const float* label,
                                  float* prob, float* loss, unsigned long long* bad_label) {
  for (int64_t p = GridStart(); p < positions; p += GridStride()) {
    float* column = prob + (p / inner) * channels * inner + p % inner;
    const int64_t value = ClassLabel(label[p]);
    const bool ignored = has_ignore_label && value == ignore_label;
    if (ignored || value < 0 || value >= channels) {
      if (!ignored) RecordBadLabel(bad_label, p, value);
      for (int64_t c = 0; c < channels; ++c) column[c * inner] = 0.0f;
      loss[p] = kUncounted;
      continue;
    }
    float* q = column + value * inner;
    const float probability = *q;
    loss[p] = -logf(probability < FLT_MIN ? FLT_MIN : probability);
    *q -= 1.0f;
  }
}

/// A position's loss and whether it counts.
struct PositionLossTerm {
  const float* loss;
  __device__ DoublePair operator()(int64_t i) const {
    const float value = loss[i];
    return value == kUncounted ? DoublePair{0, 0} : DoublePair{value, 1};
  }
};

}  // namespace

// launchers

void SoftmaxWithLossLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                       const std::vector<Blob*>& top) {
  ForwardSoftmax(top);
  // Nothing is read back: the labels are checked on the device, and their
  // errors raised by CheckDeferredErrors.
  const int64_t positions = outer_num_ * inner_num_;
  position_loss_.Reshape(std::vector<int64_t>{positions});
  if (positions > 0) {
    Launch("SoftmaxLossKernel", CudaBlocks(positions), SoftmaxLossKernel, positions, channels_,
           inner_num_, has_ignore_label_, ignore_label_, bottom[1]->gpu_data(),
           prob_.mutable_gpu_data(), position_loss_.mutable_gpu_data(), bad_label_.gpu());
  }
  const float fixed = normalization_ == LossParameter::VALID
                          ? 0.0f
                          : Normalizer(normalization_, outer_num_, inner_num_, 0);
  device_normalizer_.Resize(sizeof(float));
  GpuChannelReduce<DoublePair>(
      1, 1, positions, PositionLossTerm{position_loss_.gpu_data()},
      FinishNormalizedLoss{fixed, top[0]->mutable_gpu_data(),
                           static_cast<float*>(device_normalizer_.mutable_gpu_data())});
}

void SoftmaxWithLossLayer::Backward_gpu(const std::vector<Blob*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob*>& bottom) {
  BackwardFromSavedOnGpu(top, propagate_down, bottom, "labels", prob_, &device_normalizer_);
}

}  // namespace demi
