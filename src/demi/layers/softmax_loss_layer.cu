#include <cfloat>

#include "demi/layers/layer_checks.hpp"
#include "demi/layers/softmax_loss_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// One thread per (outer i, inner j) position: its loss -log p[label], and
/// p - onehot(label) in place of p (a zero column where the label is
/// ignored). The labels were checked on the host.
__global__ void SoftmaxLossKernel(int64_t positions, int64_t channels, int64_t inner,
                                  bool has_ignore_label, int64_t ignore_label, const float* label,
                                  float* prob, float* loss) {
  for (int64_t p = GridStart(); p < positions; p += GridStride()) {
    float* column = prob + (p / inner) * channels * inner + p % inner;
    const int64_t value = static_cast<int64_t>(label[p]);
    if (has_ignore_label && value == ignore_label) {
      for (int64_t c = 0; c < channels; ++c) column[c * inner] = 0.0f;
      loss[p] = 0.0f;
      continue;
    }
    float* q = column + value * inner;
    loss[p] = -logf(fmaxf(*q, FLT_MIN));
    *q -= 1.0f;
  }
}

}  // namespace

// launchers

void SoftmaxWithLossLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                       const std::vector<Blob*>& top) {
  ForwardSoftmax(top);
  // The labels are checked and counted on the host, with the CPU's message.
  const int64_t positions = outer_num_ * inner_num_;
  const float* label = bottom[1]->cpu_data();
  int64_t valid_count = 0;
  for (int64_t index = 0; index < positions; ++index) {
    const int64_t value = static_cast<int64_t>(label[index]);
    if (has_ignore_label_ && value == ignore_label_) continue;
    CheckClassLabel(*this, value, index, channels_, *bottom[0]);
    ++valid_count;
  }
  double loss = 0;
  if (positions > 0) {
    position_loss_.Reshape(std::vector<int64_t>{positions});
    Launch("SoftmaxLossKernel", CudaBlocks(positions), SoftmaxLossKernel, positions, channels_,
           inner_num_, has_ignore_label_, ignore_label_, bottom[1]->gpu_data(),
           prob_.mutable_gpu_data(), position_loss_.mutable_gpu_data());
    loss = GpuAsum(positions, position_loss_.gpu_data());  // every term is >= 0
  }
  normalizer_ = WriteNormalizedLoss(
      loss, Normalizer(normalization_, outer_num_, inner_num_, valid_count), top[0]);
}

}  // namespace demi
