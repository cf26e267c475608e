#include "demi/layers/elementwise.cuh"
#include "demi/layers/sigmoid_layer.hpp"

namespace demi {

// kernels: the element-wise map for this layer's formulas

template void MapOnGpu(int64_t, const float*, float*, SigmoidForward);
template void MapOnGpu(int64_t, const float*, const float*, float*, SigmoidBackward);

}  // namespace demi
