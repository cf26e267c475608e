#include "demi/layers/accuracy_layer.hpp"

#include <algorithm>

#include "demi/layer_registry.hpp"

namespace demi {

void AccuracyLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const AccuracyParameter& param = layer_param_.accuracy_param();
  top_k_ = param.top_k();
  DEMI_CHECK(top_k_ >= 1, "Accuracy layer '", layer_param_.name(), "' needs top_k >= 1");
  has_ignore_label_ = param.has_ignore_label();
  ignore_label_ = param.ignore_label();
}

void AccuracyLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int axis = layer_param_.accuracy_param().axis();
  const int num_axes = bottom[0]->num_axes();
  DEMI_CHECK(axis >= -num_axes && axis < num_axes, "Accuracy layer '", layer_param_.name(),
             "': accuracy_param.axis ", axis, " is out of range for scores ",
             bottom[0]->shape_string());
  const int canonical = bottom[0]->CanonicalAxisIndex(axis);
  outer_num_ = bottom[0]->count(0, canonical);
  channels_ = bottom[0]->shape(canonical);
  inner_num_ = bottom[0]->count(canonical + 1);
  DEMI_CHECK(bottom[1]->count() == outer_num_ * inner_num_, "Accuracy layer '", layer_param_.name(),
             "': scores ", bottom[0]->shape_string(), " with class axis ", canonical, " need ",
             outer_num_ * inner_num_, " labels, but the labels have shape ",
             bottom[1]->shape_string());
  DEMI_CHECK(top_k_ <= channels_, "Accuracy layer '", layer_param_.name(), "': top_k ", top_k_,
             " exceeds the ", channels_, " classes of scores ", bottom[0]->shape_string());
  top[0]->Reshape(std::vector<int64_t>{});
  if (top.size() > 1) {
    top[1]->Reshape(std::vector<int64_t>{channels_});
    class_labels_.resize(static_cast<size_t>(channels_));
    class_hits_.resize(static_cast<size_t>(channels_));
  }
}

void AccuracyLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const bool per_class = top.size() > 1;
  const int64_t dim = channels_ * inner_num_;
  const float* scores = bottom[0]->cpu_data();
  const float* label = bottom[1]->cpu_data();
  if (per_class) {
    std::fill(class_labels_.begin(), class_labels_.end(), 0);
    std::fill(class_hits_.begin(), class_hits_.end(), 0);
  }
  int64_t correct = 0;
  int64_t counted = 0;
  for (int64_t i = 0; i < outer_num_; ++i) {
    for (int64_t j = 0; j < inner_num_; ++j) {
      const int64_t index = i * inner_num_ + j;
      const int64_t value = static_cast<int64_t>(label[index]);
      if (has_ignore_label_ && value == ignore_label_) continue;
      DEMI_CHECK(value >= 0 && value < channels_, "Accuracy layer '", layer_param_.name(),
                 "': label ", value, " at index ", index, " is outside [0, ", channels_,
                 ") for scores ", bottom[0]->shape_string());
      const float* column = scores + i * dim + j;
      const float label_score = column[value * inner_num_];
      int64_t num_better = 0;
      for (int64_t c = 0; c < channels_; ++c) {
        if (column[c * inner_num_] > label_score) ++num_better;
      }
      const bool hit = num_better < top_k_;
      correct += hit ? 1 : 0;
      ++counted;
      if (per_class) {
        ++class_labels_[value];
        class_hits_[value] += hit ? 1 : 0;
      }
    }
  }
  WriteAccuracies(correct, counted, top);
}

void AccuracyLayer::WriteAccuracies(int64_t correct, int64_t counted,
                                    const std::vector<Blob*>& top) {
  top[0]->mutable_cpu_data()[0] =
      counted == 0 ? 0.0f : static_cast<float>(static_cast<double>(correct) / counted);
  if (top.size() < 2) return;
  float* class_accuracy = top[1]->mutable_cpu_data();
  for (int64_t c = 0; c < channels_; ++c) {
    const int64_t seen = class_labels_[c];
    class_accuracy[c] =
        seen == 0 ? 0.0f : static_cast<float>(static_cast<double>(class_hits_[c]) / seen);
  }
}

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
