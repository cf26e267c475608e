#include "demi/layers/accuracy_layer.hpp"
#include "demi/layers/loss_kernels.cuh"

namespace demi {

namespace {

/// What the kernel finds at a position (exact in a float).
constexpr float kHit = 1.0f;
constexpr float kMiss = 0.0f;
constexpr float kIgnored = -1.0f;
constexpr float kBadLabel = -2.0f;

// kernels

/// One thread per (outer i, inner j) position: whether fewer than top_k
/// classes score strictly higher than the label's; a label outside the
/// classes is recorded in *bad_label (BadLabelRecord).
__global__ void AccuracyKernel(int64_t positions, int64_t channels, int64_t inner, int64_t top_k,
                               bool has_ignore_label, int64_t ignore_label, const float* scores,
                               const float* label, float* outcome, unsigned long long* bad_label) {
  for (int64_t p = GridStart(); p < positions; p += GridStride()) {
    const int64_t value = ClassLabel(label[p]);
    if (has_ignore_label && value == ignore_label) {
      outcome[p] = kIgnored;
      continue;
    }
    if (value < 0 || value >= channels) {
      outcome[p] = kBadLabel;
      RecordBadLabel(bad_label, p, value);
      continue;
    }
    const float* column = scores + (p / inner) * channels * inner + p % inner;
    const float label_score = column[value * inner];
    int64_t num_better = 0;
    for (int64_t c = 0; c < channels; ++c) {
      if (column[c * inner] > label_score) ++num_better;
    }
    outcome[p] = num_better < top_k ? kHit : kMiss;
  }
}

/// Whether an outcome counts (a hit or a miss), and is a hit.
__device__ inline bool Counted(float outcome) { return outcome == kHit || outcome == kMiss; }

/// A position's hit (a) and whether it counts (b).
struct HitTerm {
  const float* outcome;
  __device__ DoublePair operator()(int64_t p) const {
    const float o = outcome[p];
    return Counted(o) ? DoublePair{o, 1} : DoublePair{0, 0};
  }
};

/// Term (c, p) of a 1 x classes x positions reduction: position p's hit (a)
/// and count (b) where its label is class c, else nothing.
struct ClassHitTerm {
  const float* outcome;
  const float* label;
  int64_t positions;
  __device__ DoublePair operator()(int64_t i) const {
    const int64_t c = i / positions, p = i % positions;
    const float o = outcome[p];
    if (!Counted(o) || ClassLabel(label[p]) != c) return DoublePair{0, 0};
    return DoublePair{o, 1};
  }
};

/// out[c] = hits / counted, 0 where none counted: the exact integers of
/// AccuracyLayer::WriteAccuracies, divided as there.
struct FinishAccuracy {
  float* out;
  __device__ void operator()(int64_t c, const DoublePair& total) const {
    out[c] = total.b == 0 ? 0.0f : static_cast<float>(total.a / total.b);
  }
};

}  // namespace

// launchers

void AccuracyLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  // Ranked and counted on the device, nothing read back: the counts are
  // integers, exact in doubles, and a bad label is raised by
  // CheckDeferredErrors with the CPU's message.
  const int64_t positions = outer_num_ * inner_num_;
  const float* outcome = nullptr;
  const float* label = nullptr;
  if (positions > 0) {
    outcome_.Reshape(std::vector<int64_t>{positions});
    label = bottom[1]->gpu_data();
    Launch("AccuracyKernel", CudaBlocks(positions), AccuracyKernel, positions, channels_,
           inner_num_, top_k_, has_ignore_label_, ignore_label_, bottom[0]->gpu_data(), label,
           outcome_.mutable_gpu_data(), bad_label_.gpu());
    outcome = outcome_.gpu_data();
  }
  GpuChannelReduce<DoublePair>(1, 1, positions, HitTerm{outcome},
                               FinishAccuracy{top[0]->mutable_gpu_data()});
  if (top.size() < 2) return;
  GpuChannelReduce<DoublePair>(1, channels_, positions, ClassHitTerm{outcome, label, positions},
                               FinishAccuracy{top[1]->mutable_gpu_data()});
}

void AccuracyLayer::Backward_gpu(const std::vector<Blob*>& top,
                                 const std::vector<bool>& propagate_down,
                                 const std::vector<Blob*>& bottom) {
  Backward_cpu(top, propagate_down, bottom);  // only refuses to propagate: no device work
}

}  // namespace demi
