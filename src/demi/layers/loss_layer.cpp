#include "demi/layers/loss_layer.hpp"

#include <algorithm>

#include "demi/util/device_math.hpp"

namespace demi {

float LossLayer::Normalizer(LossParameter::NormalizationMode mode, int64_t outer, int64_t inner,
                            int64_t valid) {
  int64_t normalizer = 1;
  switch (mode) {
    case LossParameter::FULL:
      normalizer = outer * inner;
      break;
    case LossParameter::VALID:
      normalizer = valid;
      break;
    case LossParameter::BATCH_SIZE:
      normalizer = outer;
      break;
    case LossParameter::NONE:
      normalizer = 1;
      break;
  }
  return static_cast<float>(std::max<int64_t>(normalizer, 1));
}

LossParameter::NormalizationMode LossLayer::NormalizationOf(
    const LossParameter& param, LossParameter::NormalizationMode fallback) {
  if (param.has_normalization()) return param.normalization();
  if (param.has_normalize()) {
    return param.normalize() ? LossParameter::VALID : LossParameter::BATCH_SIZE;
  }
  return fallback;
}

float LossLayer::WriteNormalizedLoss(double loss, float normalizer, Blob* top) {
  top->mutable_cpu_data()[0] = static_cast<float>(loss / normalizer);
  return normalizer;
}

void LossLayer::BackwardFromSaved(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom, const char* target,
                                  const Blob& saved, float normalizer) const {
  RefuseGradient(propagate_down, 1, target);
  if (!propagate_down[0]) return;
  const Device device = context_.device;
  const float scale = top[0]->cpu_diff()[0] / normalizer;
  float* dx = bottom[0]->mutable_diff_on(device);
  // A copy scaled in place: scale * saved exactly, on both devices.
  Copy(device, saved.count(), saved.data_on(device), dx);
  Scal(device, saved.count(), scale, dx);
}

void PerSampleLossLayer::ReshapeSamples(const std::vector<Blob*>& bottom,
                                        const std::vector<Blob*>& top, int labels,
                                        const char* what) {
  LossLayer::Reshape(bottom, top);
  num_ = bottom[0]->shape(0);
  dim_ = num_ > 0 ? bottom[0]->count() / num_ : 0;
  DEMI_CHECK(bottom[labels]->count() == num_, type(), " layer '", layer_param_.name(),
             "': samples ", bottom[0]->shape_string(), " need ", num_, " ", what, ", but the ",
             what, " have shape ", bottom[labels]->shape_string());
}

}  // namespace demi
