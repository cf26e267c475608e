#include "demi/layers/softmax_loss_layer.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/layers/class_label.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/math.hpp"

namespace demi {
void SoftmaxWithLossLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                      const std::vector<Blob*>& top) {
  SetUpSoftmax(bottom[0], layer_param_.softmax_param().axis());
}

void SoftmaxWithLossLayer::Reshape(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  ReshapeSoftmax(bottom[0]);
  const int axis = bottom[0]->CanonicalAxisIndex(layer_param_.softmax_param().axis());
  outer_num_ = bottom[0]->count(0, axis);
  channels_ = bottom[0]->shape(axis);
  inner_num_ = bottom[0]->count(axis + 1);
  DEMI_CHECK(bottom[1]->count() == outer_num_ * inner_num_, "SoftmaxWithLoss layer '",
             layer_param_.name(), "': scores ", bottom[0]->shape_string(), " with softmax axis ",
             axis, " need ", outer_num_ * inner_num_, " labels, but the labels have shape ",
             bottom[1]->shape_string());
  LossLayer::Reshape(bottom, top);
  if (top.size() > 1) top[1]->ReshapeLike(*bottom[0]);
}

void SoftmaxWithLossLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                       const std::vector<Blob*>& top) {
  ForwardSoftmax(top);
  double loss = 0;
  const int64_t valid_count =
      ForEachLabeledColumn(bottom[1]->cpu_data(), [&](int64_t index, float label, float* column) {
        const int64_t value = ClassLabel(label);
        CheckClassLabel(*this, value, index, channels_, *bottom[0]);
        float* p = column + value * inner_num_;
        loss -= std::log(std::max(*p, FLT_MIN));
        *p -= 1.0f;
      });
  normalizer_ = WriteNormalizedLoss(
      loss, Normalizer(normalization_, outer_num_, inner_num_, valid_count), top[0]);
}

void SoftmaxWithLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob*>& bottom) {
  BackwardFromSaved(top, propagate_down, bottom, "labels", prob_, normalizer_);
}

void SoftmaxWithLossLayer::CheckDeferredErrors() {
  bad_label_.Raise(*this, channels_, prob_.shape());  // prob_ has the scores' shape
}

DEMI_REGISTER_LAYER(SoftmaxWithLoss);

}  // namespace demi
