#include "demi/layers/infogain_loss_layer.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/io.hpp"
#include "demi/util/math.hpp"

namespace demi {

void InfogainLossLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  const InfogainLossParameter& param = layer_param_.infogain_loss_param();
  if (bottom.size() < 3) {
    DEMI_CHECK(param.has_source(), "InfogainLoss layer '", layer_param_.name(),
               "' needs infogain_loss_param.source or the infogain matrix as a third bottom");
    BlobProto proto;
    try {
      ReadProtoFromBinaryFile(param.source(), &proto);
    } catch (const Error& error) {
      ThrowError(StrCat("InfogainLoss layer '", layer_param_.name(), "': ", error.what()));
    }
    infogain_.FromProto(proto);
  }
  CheckAxis(*bottom[0]);
  if (!softmax_) {  // kept across repeated setups: its buffers stay registered
    LayerParameter softmax_param = layer_param_;
    softmax_param.set_type("Softmax");
    softmax_param.clear_loss_weight();
    softmax_param.mutable_softmax_param()->set_axis(param.axis());
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

  const LossParameter& loss_param = layer_param_.loss_param();
  has_ignore_label_ = loss_param.has_ignore_label();
  ignore_label_ = loss_param.ignore_label();
  if (!loss_param.has_normalization() && loss_param.has_normalize()) {
    normalization_ = loss_param.normalize() ? LossParameter::VALID : LossParameter::BATCH_SIZE;
  } else {
    normalization_ = loss_param.normalization();
  }
}

void InfogainLossLayer::CheckAxis(const Blob& scores) const {
  const int axis = layer_param_.infogain_loss_param().axis();
  DEMI_CHECK(axis >= -scores.num_axes() && axis < scores.num_axes(), "InfogainLoss layer '",
             layer_param_.name(), "': infogain_loss_param.axis ", axis,
             " is out of range for scores ", scores.shape_string());
}

void InfogainLossLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Blob& scores = *bottom[0];
  CheckAxis(scores);
  const int axis = scores.CanonicalAxisIndex(layer_param_.infogain_loss_param().axis());
  outer_num_ = scores.count(0, axis);
  channels_ = scores.shape(axis);
  inner_num_ = scores.count(axis + 1);
  DEMI_CHECK(bottom[1]->count() == outer_num_ * inner_num_, "InfogainLoss layer '",
             layer_param_.name(), "': scores ", scores.shape_string(), " with class axis ", axis,
             " need ", outer_num_ * inner_num_, " labels, but the labels have shape ",
             bottom[1]->shape_string());
  const Blob& infogain = bottom.size() > 2 ? *bottom[2] : infogain_;
  DEMI_CHECK(infogain.count() == channels_ * channels_, "InfogainLoss layer '", layer_param_.name(),
             "': the infogain matrix of shape ", infogain.shape_string(), " needs ", channels_,
             " x ", channels_, " values for the ", channels_, " classes of scores ",
             scores.shape_string());
  softmax_bottom_[0] = bottom[0];
  softmax_->Reshape(softmax_bottom_, softmax_top_);
  LossLayer::Reshape(bottom, top);
  if (top.size() > 1) top[1]->ReshapeLike(scores);
}

const float* InfogainLossLayer::Infogain(const std::vector<Blob*>& bottom) const {
  return bottom.size() > 2 ? bottom[2]->cpu_data() : infogain_.cpu_data();
}

void InfogainLossLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                    const std::vector<Blob*>& top) {
  softmax_->Forward(softmax_bottom_, softmax_top_);
  if (top.size() > 1) Copy(prob_.count(), prob_.cpu_data(), top[1]->mutable_cpu_data());
  const float* label = bottom[1]->cpu_data();
  const float* infogain = Infogain(bottom);
  float* prob = prob_.mutable_cpu_data();
  double loss = 0;
  int64_t valid = 0;
  for (int64_t i = 0; i < outer_num_; ++i) {
    for (int64_t j = 0; j < inner_num_; ++j) {
      const int64_t index = i * inner_num_ + j;
      float* column = prob + i * channels_ * inner_num_ + j;
      if (Ignored(label[index])) {
        for (int64_t k = 0; k < channels_; ++k) column[k * inner_num_] = 0.0f;
        continue;
      }
      DEMI_CHECK(label[index] >= 0 && label[index] < static_cast<float>(channels_) &&
                     label[index] == std::floor(label[index]),
                 "InfogainLoss layer '", layer_param_.name(), "': label ", label[index],
                 " at index ", index, " is not a class in [0, ", channels_, ") for scores ",
                 bottom[0]->shape_string());
      const float* row = infogain + static_cast<int64_t>(label[index]) * channels_;
      float row_sum = 0.0f;
      for (int64_t k = 0; k < channels_; ++k) {
        loss -= row[k] * std::log(std::max(column[k * inner_num_], FLT_MIN));
        row_sum += row[k];
      }
      // The probabilities become the unscaled gradient p_c sum_k H[l, k] - H[l, c].
      for (int64_t k = 0; k < channels_; ++k) {
        column[k * inner_num_] = column[k * inner_num_] * row_sum - row[k];
      }
      ++valid;
    }
  }
  normalizer_ = Normalizer(normalization_, outer_num_, inner_num_, valid);
  top[0]->mutable_cpu_data()[0] = static_cast<float>(loss / normalizer_);
}

void InfogainLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob*>& bottom) {
  DEMI_CHECK(!propagate_down[1], "InfogainLoss layer '", layer_param_.name(),
             "' cannot backpropagate to labels");
  DEMI_CHECK(bottom.size() < 3 || !propagate_down[2], "InfogainLoss layer '", layer_param_.name(),
             "' cannot backpropagate to the infogain matrix");
  if (!propagate_down[0]) return;
  const float scale = top[0]->cpu_diff()[0] / normalizer_;
  const float* gradient = prob_.cpu_data();
  float* dx = bottom[0]->mutable_cpu_diff();
  for (int64_t i = 0; i < prob_.count(); ++i) dx[i] = scale * gradient[i];
}

DEMI_REGISTER_LAYER(InfogainLoss);

}  // namespace demi
