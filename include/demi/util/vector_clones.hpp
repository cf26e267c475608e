#ifndef DEMI_UTIL_VECTOR_CLONES_HPP_
#define DEMI_UTIL_VECTOR_CLONES_HPP_

#include <cstdint>

#include "demi/util/threads.hpp"

// DEMI_VECTOR_CLONES before a function with a vectorisable loop: one clone
// per ISA, picked when the library loads (GCC function multiversioning), so
// a binary built for plain x86-64 runs the loop in AVX-512 or AVX2 where the
// CPU has them. Pair it with `#pragma omp simd` on the loop: GCC's -O2 cost
// model vectorises little on its own. The build has no FMA contraction, so
// every clone computes an element-wise loop bit for bit alike. Under
// ThreadSanitizer the clones are off: their resolvers run while the dynamic
// linker relocates, before TSan's runtime starts, and its instrumentation
// would crash them. nvcc's host pass (headers a .cu file includes) gets the
// plain functions.
#if defined(DEMI_NO_TARGET_CLONES) || defined(__CUDACC__)
#define DEMI_VECTOR_CLONES
#else
#define DEMI_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
// Clang (make fuzz) clones no function templates yet: RunVectorized is
// plain there.
#if defined(__clang__)
#define DEMI_TEMPLATE_VECTOR_CLONES
#else
#define DEMI_TEMPLATE_VECTOR_CLONES DEMI_VECTOR_CLONES
#endif

namespace demi {

/// body(begin, end) in a clone per ISA with body's code inlined into it
/// (flatten): the loops of a lambda run through here vectorise for the
/// CPU's widest vectors. A private copy of body, as in ParallelFor, keeps
/// its captures from aliasing what it stores through.
template <typename Body>
DEMI_TEMPLATE_VECTOR_CLONES __attribute__((flatten)) void RunVectorized(int64_t begin, int64_t end,
                                                                        const Body& body) {
  Body local = body;
  local(begin, end);
}

/// ParallelFor whose blocks run through RunVectorized: for the hot
/// element-wise, per-channel and per-pixel loops only (BatchNorm, Scale, the
/// channels-last pooling and LRN kernels), since each such call site
/// compiles three times.
template <typename Body>
void ParallelForVectorized(int64_t n, int64_t grain, const Body& body) {
  ParallelFor(n, grain, [&body](int64_t begin, int64_t end) { RunVectorized(begin, end, body); });
}

}  // namespace demi

#endif  // DEMI_UTIL_VECTOR_CLONES_HPP_
