#include "demi/layers/bnll_layer.hpp"
#include "demi/layers/elementwise.cuh"

namespace demi {

// kernels: the element-wise map for this layer's formulas

template void MapOnGpu(int64_t, const float*, float*, BNLLForward);
template void MapOnGpu(int64_t, const float*, const float*, float*, BNLLBackward);

}  // namespace demi
