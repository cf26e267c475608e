#ifndef DEMI_UTIL_VECTOR_CLONES_HPP_
#define DEMI_UTIL_VECTOR_CLONES_HPP_

// DEMI_VECTOR_CLONES before a function with a vectorisable loop: one clone
// per ISA, picked when the library loads (GCC function multiversioning), so
// a binary built for plain x86-64 runs the loop in AVX-512 or AVX2 where the
// CPU has them. Pair it with `#pragma omp simd` on the loop: GCC's -O2 cost
// model vectorises little on its own. Under ThreadSanitizer the clones are
// off: their resolvers run while the dynamic linker relocates, before TSan's
// runtime starts, and its instrumentation would crash them.
#ifdef DEMI_NO_TARGET_CLONES
#define DEMI_VECTOR_CLONES
#else
#define DEMI_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

#endif  // DEMI_UTIL_VECTOR_CLONES_HPP_
