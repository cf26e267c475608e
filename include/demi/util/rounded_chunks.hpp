#ifndef DEMI_UTIL_ROUNDED_CHUNKS_HPP_
#define DEMI_UTIL_ROUNDED_CHUNKS_HPP_

// Stores into 16-bit elements (bfloat16, float16) a chunk at a time: the
// chunk computed in floats, then rounded in one pass (StoreRounded: 8 or 16
// values per instruction). Our loops are compiled for any x86-64, whose SSE2
// has no 32-to-16-bit pack: rounding element by element made Eltwise's
// backward 5x slower than in FLOAT.
#include <algorithm>
#include <cstdint>

#include "demi/util/bfloat16.hpp"
#include "demi/util/float16.hpp"
#include "demi/util/threads.hpp"

namespace demi {

/// Elements per chunk: a multiple of every channel block, small enough for
/// the stack.
constexpr int64_t kRoundedChunk = 1024;

/// FLOAT as a stored type of its own (a copy each way), so that a loop
/// written once over the stored types, as VisitStorageType hands them,
/// compiles for all three. Declared before the templates below call them.
inline void LoadWidened(int64_t n, const float* x, float* y) { std::copy_n(x, n, y); }
inline void StoreRounded(int64_t n, const float* x, float* y) { std::copy_n(x, n, y); }

/// y[begin, end) a chunk of at most kRoundedChunk at a time:
/// `compute(at, n, chunk)` writes the n floats of y[at, at + n) into `chunk`
/// (it may read y there: in place), which are then rounded into y.
template <typename Half, typename Compute>
void StoreRoundedChunks(int64_t begin, int64_t end, Half* y, const Compute& compute) {
  float chunk[kRoundedChunk];
  for (int64_t at = begin; at < end; at += kRoundedChunk) {
    const int64_t n = std::min(kRoundedChunk, end - at);
    compute(at, n, chunk);
    StoreRounded(n, chunk, y + at);
  }
}

/// y[i] = x[i] widened, for a chunk of n 16-bit values: FLOAT16 through
/// F16C where the CPU has it (float16's own conversion is bit arithmetic
/// per element, which made a FLOAT16 ReLU a fifth of a ResNet-50 step),
/// BFLOAT16 by a shift the compiler vectorizes.
inline void LoadWidened(int64_t n, const float16* x, float* y) { WidenFloat16(n, x, y); }
inline void LoadWidened(int64_t n, const bfloat16* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(x[i]);
}

/// The same over y[0, count), threads taking ranges.
template <typename Half, typename Compute>
void ParallelStoreRounded(int64_t count, Half* y, const Compute& compute) {
  ParallelFor(count,
              [&](int64_t begin, int64_t end) { StoreRoundedChunks(begin, end, y, compute); });
}

}  // namespace demi

#endif  // DEMI_UTIL_ROUNDED_CHUNKS_HPP_
