#include "demi/layers/accuracy_layer.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

/// What the kernel finds at a position (exact in a float).
constexpr float kHit = 1.0f;
constexpr float kMiss = 0.0f;
constexpr float kIgnored = -1.0f;
constexpr float kBadLabel = -2.0f;

// kernels

/// One thread per (outer i, inner j) position: whether fewer than top_k
/// classes score strictly higher than the label's.
__global__ void AccuracyKernel(int64_t positions, int64_t channels, int64_t inner, int64_t top_k,
                               bool has_ignore_label, int64_t ignore_label, const float* scores,
                               const float* label, float* outcome) {
  for (int64_t p = GridStart(); p < positions; p += GridStride()) {
    const int64_t value = static_cast<int64_t>(label[p]);
    if (has_ignore_label && value == ignore_label) {
      outcome[p] = kIgnored;
      continue;
    }
    if (value < 0 || value >= channels) {
      outcome[p] = kBadLabel;
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

}  // namespace

// launchers

void AccuracyLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  // The scores are ranked on the device; the tallies are integers on the
  // host, exact at any count (and checked in order, with the CPU's message).
  const int64_t positions = outer_num_ * inner_num_;
  const float* outcome = nullptr;
  if (positions > 0) {
    outcome_.Reshape(std::vector<int64_t>{positions});
    Launch("AccuracyKernel", CudaBlocks(positions), AccuracyKernel, positions, channels_,
           inner_num_, top_k_, has_ignore_label_, ignore_label_, bottom[0]->gpu_data(),
           bottom[1]->gpu_data(), outcome_.mutable_gpu_data());
    outcome = outcome_.cpu_data();
  }
  ResetTallies(top.size() > 1);
  const float* label = bottom[1]->cpu_data();
  for (int64_t index = 0; index < positions; ++index) {
    if (outcome[index] == kIgnored) continue;
    const int64_t value = static_cast<int64_t>(label[index]);
    if (outcome[index] == kBadLabel) CheckClassLabel(*this, value, index, channels_, *bottom[0]);
    Tally(value, outcome[index] == kHit);
  }
  WriteAccuracies(top);
}

void AccuracyLayer::Backward_gpu(const std::vector<Blob*>& top,
                                 const std::vector<bool>& propagate_down,
                                 const std::vector<Blob*>& bottom) {
  Backward_cpu(top, propagate_down, bottom);  // only refuses to propagate: no device work
}

}  // namespace demi
