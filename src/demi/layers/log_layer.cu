#include "demi/layers/elementwise.cuh"
#include "demi/layers/log_layer.hpp"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(LogForward);
DEMI_INSTANTIATE_MAP2(LogBackward);

}  // namespace demi
