#ifndef DEMI_UTIL_HOST_DEVICE_HPP_
#define DEMI_UTIL_HOST_DEVICE_HPP_

/// Marks a small inline function (an element-wise formula) that the host
/// code and, compiled by nvcc, the CUDA kernels both call, so the formula is
/// written once. Its math must use functions both sides have with the same
/// results on the host as before: the float C functions (tanhf, expf,
/// log1pf, expm1f), which std::tanh(float) and the like call on the host.
#ifdef __CUDACC__
#define DEMI_HOST_DEVICE __host__ __device__
#else
#define DEMI_HOST_DEVICE
#endif

#endif  // DEMI_UTIL_HOST_DEVICE_HPP_
