#include "demi/layers/elu_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

void ELULayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  alpha_ = layer_param_.elu_param().alpha();
  DEMI_CHECK(alpha_ >= 0, "ELU layer '", layer_param_.name(),
             "' needs a non-negative elu_param.alpha, got ", alpha_);
}

DEMI_REGISTER_LAYER(ELU);

}  // namespace demi
