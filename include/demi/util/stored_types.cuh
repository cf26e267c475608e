#ifndef DEMI_UTIL_STORED_TYPES_CUH_
#define DEMI_UTIL_STORED_TYPES_CUH_

// For .cu files: the stored types of Blob::storage_type() in kernels. A
// kernel written once over T (float, float16 or bfloat16) loads with Widen,
// computes in float and stores with Narrow<T>, as the CPU's 16-bit loops do
// (util/float16.hpp, util/bfloat16.hpp): each load exact, each store rounded
// once to nearest, ties to even, so a GPU kernel stores the bits its CPU
// twin stores for the same float.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "demi/blob.hpp"
#include "demi/util/bfloat16.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/float16.hpp"

namespace demi {

__device__ inline float Widen(float value) { return value; }
__device__ inline float Widen(float16 value) { return __half2float(__ushort_as_half(value.bits)); }
__device__ inline float Widen(bfloat16 value) {
  return __bfloat162float(__ushort_as_bfloat16(value.bits));
}

template <typename T>
__device__ inline T Narrow(float value);

template <>
__device__ inline float Narrow<float>(float value) {
  return value;
}

template <>
__device__ inline float16 Narrow<float16>(float value) {
  float16 stored;
  stored.bits = __half_as_ushort(__float2half_rn(value));
  return stored;
}

template <>
__device__ inline bfloat16 Narrow<bfloat16>(float value) {
  bfloat16 stored;
  stored.bits = __bfloat16_as_ushort(__float2bfloat16_rn(value));
  return stored;
}

/// ElementwiseLoop writing y[i] = value(i) (a float) rounded to T: for T =
/// float, ElementwiseInto.
template <typename T, typename Value>
__device__ inline void ElementwiseStore(int64_t n, T* y, Value value) {
  ElementwiseLoop(n, value, [y](int64_t i, float v) { y[i] = Narrow<T>(v); });
}

/// The term dy[i] x[i] of a gradient sum, or dy[i] alone where x is null,
/// both stored in T (cuda_kernel.cuh's GradientTerm, whose sums it gives for
/// T = float).
template <typename T>
struct StoredGradientTerm {
  const T* dy;
  const T* x;
  __device__ double operator()(int64_t i) const {
    return x ? static_cast<double>(Widen(dy[i])) * Widen(x[i]) : Widen(dy[i]);
  }
};

/// The terms dy[i] and dy[i] x[i] of two gradient sums taken in one pass
/// (a scale's and a bias's; BatchNorm's sums of dy and dy y), stored in T.
template <typename T>
struct StoredGradientPair {
  const T* dy;
  const T* x;
  __device__ DoublePair operator()(int64_t i) const {
    const double g = Widen(dy[i]);
    return {g, g * Widen(x[i])};
  }
};

/// A blob's device data or diff as elements of T, its storage type (the
/// launcher visits Blob::storage_type() to choose T).
template <typename T>
const T* GpuDataAs(const Blob& blob) {
  return static_cast<const T*>(blob.data()->gpu_data());
}
template <typename T>
const T* GpuDiffAs(const Blob& blob) {
  return static_cast<const T*>(blob.diff()->gpu_data());
}
template <typename T>
T* MutableGpuDataAs(Blob* blob) {
  return static_cast<T*>(blob->data()->mutable_gpu_data());
}
template <typename T>
T* MutableGpuDiffAs(Blob* blob) {
  return static_cast<T*>(blob->diff()->mutable_gpu_data());
}

}  // namespace demi

#endif  // DEMI_UTIL_STORED_TYPES_CUH_
