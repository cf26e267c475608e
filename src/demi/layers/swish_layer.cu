#include "demi/layers/elementwise.cuh"
#include "demi/layers/swish_layer.hpp"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(SwishForward);
DEMI_INSTANTIATE_MAP2(SwishBackward);

}  // namespace demi
