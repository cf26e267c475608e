#include "demi/layers/accuracy_layer.hpp"

#include <algorithm>

#include "demi/layer_registry.hpp"
#include "demi/layers/class_label.hpp"
#include "demi/layers/layer_checks.hpp"

namespace demi {

void AccuracyLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const AccuracyParameter& param = layer_param_.accuracy_param();
  top_k_ = param.top_k();
  DEMI_CHECK(top_k_ >= 1, "Accuracy layer '", layer_param_.name(), "' needs top_k >= 1");
  has_ignore_label_ = param.has_ignore_label();
  ignore_label_ = param.ignore_label();
}

void AccuracyLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int canonical = CanonicalAxis(*this, *bottom[0], layer_param_.accuracy_param().axis(),
                                      "accuracy_param.axis", "scores");
  outer_num_ = bottom[0]->count(0, canonical);
  channels_ = bottom[0]->shape(canonical);
  inner_num_ = bottom[0]->count(canonical + 1);
  DEMI_CHECK(bottom[1]->count() == outer_num_ * inner_num_, "Accuracy layer '", layer_param_.name(),
             "': scores ", bottom[0]->shape_string(), " with class axis ", canonical, " need ",
             outer_num_ * inner_num_, " labels, but the labels have shape ",
             bottom[1]->shape_string());
  DEMI_CHECK(top_k_ <= channels_, "Accuracy layer '", layer_param_.name(), "': top_k ", top_k_,
             " exceeds the ", channels_, " classes of scores ", bottom[0]->shape_string());
  scores_shape_ = bottom[0]->shape();
  top[0]->Reshape(std::vector<int64_t>{});
  if (top.size() > 1) {
    top[1]->Reshape(std::vector<int64_t>{channels_});
    class_labels_.resize(static_cast<size_t>(channels_));
    class_hits_.resize(static_cast<size_t>(channels_));
  }
}

void AccuracyLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t dim = channels_ * inner_num_;
  const float* scores = bottom[0]->cpu_data();
  const float* label = bottom[1]->cpu_data();
  ResetTallies(top.size() > 1);
  for (int64_t i = 0; i < outer_num_; ++i) {
    for (int64_t j = 0; j < inner_num_; ++j) {
      const int64_t index = i * inner_num_ + j;
      const int64_t value = ClassLabel(label[index]);
      if (has_ignore_label_ && value == ignore_label_) continue;
      CheckClassLabel(*this, value, index, channels_, *bottom[0]);
      const float* column = scores + i * dim + j;
      const float label_score = column[value * inner_num_];
      int64_t num_better = 0;
      for (int64_t c = 0; c < channels_; ++c) {
        if (column[c * inner_num_] > label_score) ++num_better;
      }
      Tally(value, num_better < top_k_);
    }
  }
  WriteAccuracies(top);
}

void AccuracyLayer::ResetTallies(bool per_class) {
  per_class_ = per_class;
  correct_ = 0;
  counted_ = 0;
  if (!per_class) return;
  std::fill(class_labels_.begin(), class_labels_.end(), 0);
  std::fill(class_hits_.begin(), class_hits_.end(), 0);
}

void AccuracyLayer::Tally(int64_t value, bool hit) {
  correct_ += hit ? 1 : 0;
  ++counted_;
  if (!per_class_) return;
  ++class_labels_[value];
  class_hits_[value] += hit ? 1 : 0;
}

void AccuracyLayer::WriteAccuracies(const std::vector<Blob*>& top) {
  top[0]->mutable_cpu_data()[0] =
      counted_ == 0 ? 0.0f : static_cast<float>(static_cast<double>(correct_) / counted_);
  if (top.size() < 2) return;
  float* class_accuracy = top[1]->mutable_cpu_data();
  for (int64_t c = 0; c < channels_; ++c) {
    const int64_t seen = class_labels_[c];
    class_accuracy[c] =
        seen == 0 ? 0.0f : static_cast<float>(static_cast<double>(class_hits_[c]) / seen);
  }
}

void AccuracyLayer::CheckDeferredErrors() { bad_label_.Raise(*this, channels_, scores_shape_); }

void AccuracyLayer::Backward_cpu(const std::vector<Blob*>& top,
                                 const std::vector<bool>& propagate_down,
                                 const std::vector<Blob*>& bottom) {
  for (size_t i = 0; i < propagate_down.size(); ++i) {
    DEMI_CHECK(!propagate_down[i], "Accuracy layer '", layer_param_.name(),
               "' is not differentiable and cannot backpropagate to bottom ", i);
  }
}

DEMI_REGISTER_LAYER(Accuracy);

}  // namespace demi
