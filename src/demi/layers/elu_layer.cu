#include "demi/layers/elementwise.cuh"
#include "demi/layers/elu_layer.hpp"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(ELUForward);
DEMI_INSTANTIATE_MAP2(ELUBackward);

}  // namespace demi
