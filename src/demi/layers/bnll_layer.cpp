#include "demi/layers/bnll_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

DEMI_REGISTER_LAYER(BNLL);

}  // namespace demi
