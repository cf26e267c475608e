#include "demi/layers/elementwise.cuh"
#include "demi/layers/tanh_layer.hpp"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(TanHForward);
DEMI_INSTANTIATE_MAP2(TanHBackward);

}  // namespace demi
