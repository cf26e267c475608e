#ifndef DEMI_UTIL_CONVERT_GPU_HPP_
#define DEMI_UTIL_CONVERT_GPU_HPP_

// Conversions between the stored types (FLOAT, FLOAT16, BFLOAT16) and
// between Caffe's layout and channels last in device memory, and a product
// of 16-bit matrices, on this thread's stream: where a GPU layer computing
// in a 16-bit type (or channels last) meets a FLOAT (or NCHW) blob or
// param. The CPU twins are float16.hpp's and bfloat16.hpp's RoundToFloat16,
// RoundToBfloat16 and WidenFloat16, which give the same bits (round to
// nearest, ties to even; widening exact).
#ifndef CPU_ONLY

#include <cstdint>

#include "demi/proto/demi.pb.h"

namespace demi {

/// y[i] = x[i] for n elements, x stored in `from` and y in `to`.
void GpuConvert(int64_t n, Type from, const void* x, Type to, void* y);

/// y[i] += x[i] widened, x stored in `type`: a gradient computed in 16 bits
/// added into a FLOAT param gradient.
void GpuAddWidened(int64_t n, Type type, const void* x, float* y);

/// GpuConvert of `num` images of channels x spatial elements between
/// Caffe's layout (N x C x HW) and channels last (N x HW x C): to channels
/// last where `to_channels_last`, else back. x and y must not overlap.
void GpuConvertLayout(int64_t num, int64_t channels, int64_t spatial, Type from, const void* x,
                      Type to, void* y, bool to_channels_last);

/// GpuAddWidened from a channels-last x into a y in Caffe's layout: a 16-bit
/// weight gradient in cuDNN's KRSC order added into the FLOAT KCRS one.
void GpuAddWidenedFromChannelsLast(int64_t num, int64_t channels, int64_t spatial, Type type,
                                   const void* x, float* y);

/// GpuGemm (row-major C = alpha op(A) op(B) + beta C) with A and B stored in
/// `ab_type` and C in `c_type` (FLOAT, or ab_type), products summed in FLOAT
/// (cublasGemmEx, CUBLAS_COMPUTE_32F: tensor ops for 16-bit inputs). Defined
/// in math_gpu.cu beside GpuGemm, whose size checks it shares.
void GpuGemmStored(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   Type ab_type, const void* a, const void* b, float beta, Type c_type, void* c);

}  // namespace demi

#endif  // CPU_ONLY
#endif  // DEMI_UTIL_CONVERT_GPU_HPP_
