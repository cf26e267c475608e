#include "demi/layers/softmax_loss_layer.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {
void SoftmaxWithLossLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                      const std::vector<Blob*>& top) {
  if (!softmax_) {  // kept across repeated setups: its buffers stay registered
    LayerParameter softmax_param = layer_param_;
    softmax_param.set_type("Softmax");
    softmax_param.clear_loss_weight();
    softmax_ = LayerRegistry::Create(softmax_param);
  }
  softmax_->set_context(context_);  // its engine follows the net's
  softmax_bottom_ = {bottom[0]};
  softmax_top_ = {&prob_};
  softmax_->SetUp(softmax_bottom_, softmax_top_);
  RegisterBuffer("prob", &prob_, BufferLifetime::kSavedForBackward);
  for (const LayerBuffer& buffer : softmax_->buffers()) {
    RegisterBuffer("softmax/" + buffer.name, buffer.blob, buffer.lifetime);
  }

  const LossParameter& param = layer_param_.loss_param();
  has_ignore_label_ = param.has_ignore_label();
  ignore_label_ = param.ignore_label();
  if (!param.has_normalization() && param.has_normalize()) {
    normalization_ = param.normalize() ? LossParameter::VALID : LossParameter::BATCH_SIZE;
  } else {
    normalization_ = param.normalization();
  }
}

void SoftmaxWithLossLayer::Reshape(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  softmax_bottom_[0] = bottom[0];
  softmax_->Reshape(softmax_bottom_, softmax_top_);
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
  softmax_->Forward(softmax_bottom_, softmax_top_);
  if (top.size() > 1) Copy(prob_.count(), prob_.cpu_data(), top[1]->mutable_cpu_data());
  const int64_t dim = channels_ * inner_num_;
  const float* label = bottom[1]->cpu_data();
  float* prob = prob_.mutable_cpu_data();
  double loss = 0;
  int64_t valid_count = 0;
  for (int64_t i = 0; i < outer_num_; ++i) {
    for (int64_t j = 0; j < inner_num_; ++j) {
      const int64_t index = i * inner_num_ + j;
      const int64_t value = static_cast<int64_t>(label[index]);
      float* column = prob + i * dim + j;
      if (has_ignore_label_ && value == ignore_label_) {
        for (int64_t c = 0; c < channels_; ++c) column[c * inner_num_] = 0.0f;
        continue;
      }
      DEMI_CHECK(value >= 0 && value < channels_, "SoftmaxWithLoss layer '", layer_param_.name(),
                 "': label ", value, " at index ", index, " is outside [0, ", channels_,
                 ") for scores ", bottom[0]->shape_string());
      float* p = column + value * inner_num_;
      loss -= std::log(std::max(*p, FLT_MIN));
      *p -= 1.0f;
      ++valid_count;
    }
  }
  normalizer_ = Normalizer(normalization_, outer_num_, inner_num_, valid_count);
  top[0]->mutable_cpu_data()[0] = static_cast<float>(loss / normalizer_);
}

void SoftmaxWithLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob*>& bottom) {
  DEMI_CHECK(!propagate_down[1], "SoftmaxWithLoss layer '", layer_param_.name(),
             "' cannot backpropagate to labels");
  if (!propagate_down[0]) return;
  const float scale = top[0]->cpu_diff()[0] / normalizer_;
  const float* gradient = prob_.cpu_data();
  float* dx = bottom[0]->mutable_cpu_diff();
  Axpby(prob_.count(), scale, gradient, 0.0f, dx);  // dx = scale * gradient, threaded
}

DEMI_REGISTER_LAYER(SoftmaxWithLoss);

}  // namespace demi
