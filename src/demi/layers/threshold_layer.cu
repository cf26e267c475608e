#include "demi/layers/elementwise.cuh"
#include "demi/layers/threshold_layer.hpp"

namespace demi {

// kernels: the element-wise map of this layer's step, in every stored type

DEMI_INSTANTIATE_MAP(ThresholdForward);

}  // namespace demi
