#ifndef DEMI_LAYERS_LOSS_KERNELS_CUH_
#define DEMI_LAYERS_LOSS_KERNELS_CUH_

// The device pieces the GPU losses and Accuracy share. Their values,
// normalizers and label checks stay on the device, where Backward and a later
// display, test or CheckDeferredErrors read them: a training step reads
// nothing of them back, and a CUDA graph can hold them.

#include <climits>
#include <cstdint>

#include "demi/layers/class_label.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

/// Records `value`, the label at position p, outside the classes, in a
/// BadLabelRecord's device word, keeping the lowest position's. A label
/// beyond 32 bits is recorded clamped to them.
__device__ inline void RecordBadLabel(unsigned long long* record, int64_t p, int64_t value) {
  // Below 0xffffffff in the high bits: never BadLabelRecord::kNone, even for label -1.
  const int64_t position = p < 0xfffffffeLL ? p : 0xfffffffeLL;
  const int64_t label = value < INT_MIN ? INT_MIN : (value > INT_MAX ? INT_MAX : value);
  atomicMin(record, (static_cast<unsigned long long>(position) << 32) |
                        static_cast<uint32_t>(static_cast<int32_t>(label)));
}

/// A GpuChannelReduce finish for a loss summed over terms (a) of which b are
/// valid: the normalizer, `fixed`, or the count (never below 1) where `fixed`
/// is 0 (VALID), and the top, their quotient, as LossLayer::WriteNormalizedLoss
/// computes it. Both stay on the device.
struct FinishNormalizedLoss {
  float fixed;
  float* top;
  float* normalizer;
  __device__ void operator()(int64_t, const DoublePair& total) const {
    const float n = fixed > 0 ? fixed : static_cast<float>(total.b > 1 ? total.b : 1.0);
    *normalizer = n;
    *top = static_cast<float>(total.a / n);
  }
};

/// A GpuChannelReduce finish for a sum of squares over `samples` samples:
/// the top is total / samples / 2 (EuclideanLoss, ContrastiveLoss).
struct FinishHalfMean {
  double samples;
  float* top;
  __device__ void operator()(int64_t, double total) const {
    *top = static_cast<float>(total / samples / 2.0);
  }
};

// launchers

/// dx = (sign * *weight / divisor) * saved, where divisor is *normalizer or,
/// when that is null, `fixed_divisor`: a loss's saved gradient scaled by its
/// top's diff (the loss weight, times the gradient scale), both read on the
/// device. The host's formula (LossLayer::BackwardFromSaved, EuclideanLoss).
void GpuScaledLossGradient(int64_t n, float sign, const float* weight, const float* normalizer,
                           float fixed_divisor, const float* saved, float* dx);

}  // namespace demi

#endif  // DEMI_LAYERS_LOSS_KERNELS_CUH_
