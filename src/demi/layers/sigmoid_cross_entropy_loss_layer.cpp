#include "demi/layers/sigmoid_cross_entropy_loss_layer.hpp"

#include <algorithm>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/layers/class_label.hpp"

namespace demi {
void SigmoidCrossEntropyLossLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                              const std::vector<Blob*>& top) {
  RegisterBuffer("gradient", &gradient_, BufferLifetime::kSavedForBackward);
  const LossParameter& param = layer_param_.loss_param();
  has_ignore_label_ = param.has_ignore_label();
  ignore_label_ = param.ignore_label();
  normalization_ = NormalizationOf(param, LossParameter::BATCH_SIZE);
}

void SigmoidCrossEntropyLossLayer::Reshape(const std::vector<Blob*>& bottom,
                                           const std::vector<Blob*>& top) {
  DEMI_CHECK(bottom[0]->count() == bottom[1]->count(), "SigmoidCrossEntropyLoss layer '",
             layer_param_.name(), "': scores ", bottom[0]->shape_string(), " and targets ",
             bottom[1]->shape_string(), " differ in their number of elements");
  LossLayer::Reshape(bottom, top);
  gradient_.ReshapeLike(*bottom[0]);
}

void SigmoidCrossEntropyLossLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                               const std::vector<Blob*>& top) {
  const int64_t count = bottom[0]->count();
  const float* x = bottom[0]->cpu_data();
  const float* t = bottom[1]->cpu_data();
  float* gradient = gradient_.mutable_cpu_data();
  double loss = 0;
  int64_t valid = 0;
  for (int64_t k = 0; k < count; ++k) {
    if (has_ignore_label_ && ClassLabel(t[k]) == ignore_label_) {
      gradient[k] = 0.0f;
      continue;
    }
    loss += std::max(x[k], 0.0f) - x[k] * t[k] + std::log1p(std::exp(-std::fabs(x[k])));
    gradient[k] = 0.5f * std::tanh(0.5f * x[k]) + 0.5f - t[k];  // sigmoid(x) - t
    ++valid;
  }
  const int64_t outer = bottom[0]->shape(0);
  normalizer_ = WriteNormalizedLoss(
      loss, Normalizer(normalization_, outer, outer > 0 ? count / outer : 0, valid), top[0]);
}

void SigmoidCrossEntropyLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                                const std::vector<bool>& propagate_down,
                                                const std::vector<Blob*>& bottom) {
  BackwardFromSaved(top, propagate_down, bottom, "targets", gradient_, normalizer_);
}

DEMI_REGISTER_LAYER(SigmoidCrossEntropyLoss);

}  // namespace demi
