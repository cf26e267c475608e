#ifndef DEMI_UTIL_CUDA_KERNEL_CUH_
#define DEMI_UTIL_CUDA_KERNEL_CUH_

// For .cu files: the grid-stride loop bounds every kernel uses, in 64-bit
// indices, so tensors past 2^31 elements index correctly.

#include <cstdint>

#include "demi/util/cuda.hpp"

namespace demi {

/// This thread's first element.
__device__ inline int64_t GridStart() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
/// The distance between a thread's elements.
__device__ inline int64_t GridStride() { return static_cast<int64_t>(blockDim.x) * gridDim.x; }

/// The sum of every thread's `value` in a block of kCudaThreads threads, in
/// a fixed tree order (deterministic, unlike atomics); every thread gets it.
/// All threads of the block must call it; `shared` holds kCudaThreads values.
__device__ inline double BlockSum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int half = kCudaThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();  // before `shared` is written again
  return total;
}

}  // namespace demi

#endif  // DEMI_UTIL_CUDA_KERNEL_CUH_
