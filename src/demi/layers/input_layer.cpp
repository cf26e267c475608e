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
  }
}

DEMI_REGISTER_LAYER(Input);

}  // namespace demi
