#include "demi/layers/hdf5_output_layer.hpp"

#include <algorithm>

#include "demi/layer_registry.hpp"

namespace demi {

void HDF5OutputLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& file_name = layer_param_.hdf5_output_param().file_name();
  DEMI_CHECK(!file_name.empty(), "HDF5Output layer '", layer_param_.name(),
             "': hdf5_output_param has no file_name (the .h5 file to write)");
  try {
    file_ = std::make_unique<Hdf5Appender>(file_name);
  } catch (const Error& error) {
    ThrowError(StrCat("HDF5Output layer '", layer_param_.name(), "': ", error.what()));
  }
}

void HDF5OutputLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DEMI_CHECK(bottom[0]->num_axes() >= 1 && bottom[1]->num_axes() >= 1 &&
                 bottom[0]->shape(0) == bottom[1]->shape(0),
             "HDF5Output layer '", layer_param_.name(), "': data ", bottom[0]->shape_string(),
             " and label ", bottom[1]->shape_string(),
             " must have the same first dimension (rows written together)");
}

void HDF5OutputLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  file_->Append("data", bottom[0]->shape(), bottom[0]->cpu_data());
  file_->Append("label", bottom[1]->shape(), bottom[1]->cpu_data());
}

void HDF5OutputLayer::Backward_cpu(const std::vector<Blob*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob*>& bottom) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (propagate_down[i]) std::fill_n(bottom[i]->mutable_cpu_diff(), bottom[i]->count(), 0.0f);
  }
}

DEMI_REGISTER_LAYER(HDF5Output);

}  // namespace demi
