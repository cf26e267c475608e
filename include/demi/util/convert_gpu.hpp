#ifndef DEMI_UTIL_CONVERT_GPU_HPP_
#define DEMI_UTIL_CONVERT_GPU_HPP_

// Conversions between the stored types (FLOAT, FLOAT16, BFLOAT16) in device
// memory, on this thread's stream: where a GPU layer computing in a 16-bit
// type meets a FLOAT blob or param. The CPU twins are float16.hpp's and
// bfloat16.hpp's RoundToFloat16, RoundToBfloat16 and WidenFloat16, which
// give the same bits (round to nearest, ties to even; widening exact).
#ifndef CPU_ONLY

#include <cstdint>

#include "demi/proto/demi.pb.h"

namespace demi {

/// y[i] = x[i] for n elements, x stored in `from` and y in `to`.
void GpuConvert(int64_t n, Type from, const void* x, Type to, void* y);

/// y[i] += x[i] widened, x stored in `type`: a gradient computed in 16 bits
/// added into a FLOAT param gradient.
void GpuAddWidened(int64_t n, Type type, const void* x, float* y);

}  // namespace demi

#endif  // CPU_ONLY
#endif  // DEMI_UTIL_CONVERT_GPU_HPP_
