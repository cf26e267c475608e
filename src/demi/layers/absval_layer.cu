#include "demi/layers/absval_layer.hpp"
#include "demi/layers/elementwise.cuh"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(AbsValForward);
DEMI_INSTANTIATE_MAP2(AbsValBackward);

}  // namespace demi
