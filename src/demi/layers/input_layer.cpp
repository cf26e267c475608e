#include "demi/layers/input_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

void InputLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const InputParameter& param = layer_param_.input_param();
  const int num_shapes = param.shape_size();
  DEMI_CHECK(num_shapes == 0 || num_shapes == 1 || num_shapes == static_cast<int>(top.size()),
             "Input layer '", layer_param_.name(), "' has ", top.size(), " tops but ", num_shapes,
             " shapes; give 1 shape or one per top");
  for (size_t i = 0; i < top.size() && num_shapes > 0; ++i) {
    top[i]->Reshape(param.shape(num_shapes == 1 ? 0 : static_cast<int>(i)));
    // An empty batch is fine (a caller reshapes it); an empty item would
    // surface only later, as a filler's complaint about a weight shape.
    for (int axis = 1; axis < top[i]->num_axes(); ++axis) {
      DEMI_CHECK(top[i]->shape(axis) > 0, "Input layer '", layer_param_.name(), "': top ", i,
                 " has shape ", top[i]->shape_string(), ", whose axis ", axis,
                 " is 0; only the batch (axis 0) may be 0");
    }
  }
}

DEMI_REGISTER_LAYER(Input);

}  // namespace demi
