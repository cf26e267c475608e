#include "demi/layers/probability_loss_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void ProbabilityLossLayer::SetUpSoftmax(Blob* scores, int axis) {
  if (!softmax_) {  // kept across repeated setups: its buffers stay registered
    LayerParameter softmax_param = layer_param_;
    softmax_param.set_type("Softmax");
    softmax_param.clear_loss_weight();
    softmax_param.mutable_softmax_param()->set_axis(axis);
    softmax_ = LayerRegistry::Create(softmax_param);
  }
  softmax_->set_context(context_);  // its engine follows the net's
  softmax_bottom_ = {scores};
  softmax_top_ = {&prob_};
  softmax_->SetUp(softmax_bottom_, softmax_top_);
  RegisterBuffer("prob", &prob_, BufferLifetime::kSavedForBackward);
  for (const LayerBuffer& buffer : softmax_->buffers()) {
    RegisterBuffer("softmax/" + buffer.name, buffer.blob, buffer.lifetime);
  }

  const LossParameter& param = layer_param_.loss_param();
  has_ignore_label_ = param.has_ignore_label();
  ignore_label_ = param.ignore_label();
  normalization_ = NormalizationOf(param, param.normalization());
}

void ProbabilityLossLayer::ReshapeSoftmax(Blob* scores) {
  softmax_bottom_[0] = scores;
  softmax_->Reshape(softmax_bottom_, softmax_top_);
}

void ProbabilityLossLayer::ForwardSoftmax(const std::vector<Blob*>& top) {
  softmax_->set_context(context_);
  softmax_->Forward(softmax_bottom_, softmax_top_);
  if (top.size() < 2) return;
  const Device device = context_.device;
  Copy(device, prob_.count(), prob_.data_on(device), top[1]->mutable_data_on(device));
}

}  // namespace demi
