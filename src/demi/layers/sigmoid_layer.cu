#include "demi/layers/elementwise.cuh"
#include "demi/layers/sigmoid_layer.hpp"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(SigmoidForward);
DEMI_INSTANTIATE_MAP2(SigmoidBackward);

}  // namespace demi
