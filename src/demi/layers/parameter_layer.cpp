#include "demi/layers/parameter_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void ParameterLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  shape_ = ShapeFromProto(layer_param_.parameter_param().shape());
  if (blobs_.empty()) {
    blobs_.push_back(std::make_shared<Blob>(shape_));
    Set(blobs_[0]->count(), 0.0f, blobs_[0]->mutable_cpu_data());
  }
  DEMI_CHECK(blobs_.size() == 1 && blobs_[0]->shape() == shape_, "Parameter layer '",
             layer_param_.name(), "' was given ", blobs_.size(),
             " param blobs (the first of shape ", blobs_[0]->shape_string(),
             "), but parameter_param.shape is ", ShapeString(shape_));
  param_propagate_down_.assign(1, true);
}

void ParameterLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  top[0]->Reshape(shape_);
}

void ParameterLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  Copy(blobs_[0]->count(), blobs_[0]->cpu_data(), top[0]->mutable_cpu_data());
}

void ParameterLayer::Backward_cpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  if (!param_propagate_down(0)) return;
  Axpy(blobs_[0]->count(), 1.0f, top[0]->cpu_diff(), blobs_[0]->mutable_cpu_diff());
}

DEMI_REGISTER_LAYER(Parameter);

}  // namespace demi
