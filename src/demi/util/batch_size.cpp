#include "demi/util/batch_size.hpp"

#include "demi/common.hpp"

namespace demi {

namespace {

bool SetFirstDims(google::protobuf::RepeatedPtrField<BlobShape>* shapes, int64_t batch) {
  bool changed = false;
  for (BlobShape& shape : *shapes) {
    if (shape.dim_size() == 0) continue;
    shape.set_dim(0, batch);
    changed = true;
  }
  return changed;
}

}  // namespace

int SetBatchSize(NetParameter* param, int64_t batch) {
  DEMI_CHECK(batch > 0, "batch size must be positive, got ", batch);
  const auto batch32 = static_cast<uint32_t>(batch);
  int changed = 0;
  for (LayerParameter& layer : *param->mutable_layer()) {
    bool touched = false;
    if (layer.has_input_param()) {
      touched |= SetFirstDims(layer.mutable_input_param()->mutable_shape(), batch);
    }
    if (layer.has_dummy_data_param()) {
      DummyDataParameter* dummy = layer.mutable_dummy_data_param();
      touched |= SetFirstDims(dummy->mutable_shape(), batch);
      for (int i = 0; i < dummy->num_size(); ++i) dummy->set_num(i, batch32);
      touched |= dummy->num_size() > 0;
    }
    if (layer.has_data_param()) {
      layer.mutable_data_param()->set_batch_size(batch32);
      touched = true;
    }
    if (layer.has_image_data_param()) {
      layer.mutable_image_data_param()->set_batch_size(batch32);
      touched = true;
    }
    changed += touched ? 1 : 0;
  }
  return changed;
}

}  // namespace demi
