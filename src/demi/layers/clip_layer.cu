#include "demi/layers/clip_layer.hpp"
#include "demi/layers/elementwise.cuh"

namespace demi {

// kernels: the element-wise maps of this layer's formulas, in every stored type

DEMI_INSTANTIATE_MAP(ClipForward);
DEMI_INSTANTIATE_MAP2(ClipBackward);

}  // namespace demi
