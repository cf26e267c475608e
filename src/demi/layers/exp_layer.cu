#include "demi/layers/elementwise.cuh"
#include "demi/layers/exp_layer.hpp"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(ExpForward);
DEMI_INSTANTIATE_MAP2(ExpBackward);

}  // namespace demi
