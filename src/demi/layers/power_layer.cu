#include "demi/layers/elementwise.cuh"
#include "demi/layers/power_layer.hpp"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(PowerForward);
DEMI_INSTANTIATE_MAP2(PowerBackward);
DEMI_INSTANTIATE_MAP(PowerConstantBackward);

}  // namespace demi
