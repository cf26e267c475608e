#ifndef DEMI_LAYERS_ELEMENTWISE_CUH_
#define DEMI_LAYERS_ELEMENTWISE_CUH_

// The GPU side of layers/elementwise.hpp. A layer's .cu includes this and
// instantiates MapOnGpu for its formulas, e.g.
//   template void MapOnGpu(int64_t, const float*, float*, SigmoidForward);

#include "demi/layers/elementwise.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

// kernels

template <typename F>
__global__ void MapKernel(int64_t n, const float* x, float* y, F f) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = f(x[i]);
}

template <typename F>
__global__ void MapKernel2(int64_t n, const float* a, const float* b, float* y, F f) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = f(a[i], b[i]);
}

// launchers

template <typename F>
void MapOnGpu(int64_t n, const float* x, float* y, F f) {
  if (n == 0) return;
  Launch("MapKernel", CudaBlocks(n), MapKernel<F>, n, x, y, f);
}

template <typename F>
void MapOnGpu(int64_t n, const float* a, const float* b, float* y, F f) {
  if (n == 0) return;
  Launch("MapKernel2", CudaBlocks(n), MapKernel2<F>, n, a, b, y, f);
}

}  // namespace demi

#endif  // DEMI_LAYERS_ELEMENTWISE_CUH_
