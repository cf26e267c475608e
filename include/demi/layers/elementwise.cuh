#ifndef DEMI_LAYERS_ELEMENTWISE_CUH_
#define DEMI_LAYERS_ELEMENTWISE_CUH_

// The GPU side of layers/elementwise.hpp. A layer's .cu includes this and
// instantiates MapOnGpu for its formulas in every stored type, e.g.
//   DEMI_INSTANTIATE_MAP(SigmoidForward)   // y = f(x)
//   DEMI_INSTANTIATE_MAP2(SigmoidBackward)  // y = f(a, b)

#include "demi/layers/elementwise.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/stored_types.cuh"

namespace demi {

// kernels

template <typename T, typename F>
__global__ void MapKernel(int64_t n, const T* x, T* y, F f) {
  ElementwiseStore(n, y, [=](int64_t i) { return f(Widen(x[i])); });
}

template <typename T, typename F>
__global__ void MapKernel2(int64_t n, const T* a, const T* b, T* y, F f) {
  ElementwiseStore(n, y, [=](int64_t i) { return f(Widen(a[i]), Widen(b[i])); });
}

// launchers

template <typename T, typename F>
void MapOnGpu(int64_t n, const T* x, T* y, F f) {
  if (n == 0) return;
  Launch("MapKernel", ElementwiseBlocks(n), MapKernel<T, F>, n, x, y, f);
}

template <typename T, typename F>
void MapOnGpu(int64_t n, const T* a, const T* b, T* y, F f) {
  if (n == 0) return;
  Launch("MapKernel2", ElementwiseBlocks(n), MapKernel2<T, F>, n, a, b, y, f);
}

}  // namespace demi

/// MapOnGpu of a one-input formula, in each type a blob may be stored in.
#define DEMI_INSTANTIATE_MAP(Formula)                                 \
  template void MapOnGpu(int64_t, const float*, float*, Formula);     \
  template void MapOnGpu(int64_t, const float16*, float16*, Formula); \
  template void MapOnGpu(int64_t, const bfloat16*, bfloat16*, Formula)

/// MapOnGpu of a two-input formula (a backward's y or x, and dy), likewise.
#define DEMI_INSTANTIATE_MAP2(Formula)                                                \
  template void MapOnGpu(int64_t, const float*, const float*, float*, Formula);       \
  template void MapOnGpu(int64_t, const float16*, const float16*, float16*, Formula); \
  template void MapOnGpu(int64_t, const bfloat16*, const bfloat16*, bfloat16*, Formula)

#endif  // DEMI_LAYERS_ELEMENTWISE_CUH_
