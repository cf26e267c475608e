#include "demi/layers/elementwise.cuh"
#include "demi/layers/relu_layer.hpp"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(ReLUForward);
DEMI_INSTANTIATE_MAP2(ReLUBackward);

}  // namespace demi
