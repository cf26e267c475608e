#include "demi/util/bfloat16.hpp"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*, which
// -Wmaybe-uninitialized takes for a read of an uninitialized value. Clang
// (make fuzz) has no such warning and would refuse the name under -Werror.
#pragma GCC diagnostic push
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace demi {

namespace {

/// bfloat16::Round on 16 floats at a time, in AVX-512F integer arithmetic
/// (not AVX512_BF16's conversion, which flushes denormals to zero): the same
/// bits as the scalar rounding.
__attribute__((target("avx512f"))) void RoundAvx512(int64_t n, const float* x, bfloat16* y) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i infinity = _mm512_set1_epi32(0x7f800000);
  const __m512i half = _mm512_set1_epi32(0x7fff);
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i quiet = _mm512_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(x + i));
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), one);
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, half), lsb), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs_mask), infinity);
    const __m512i quieted = _mm512_or_si512(_mm512_srli_epi32(u, 16), quiet);
    const __m512i bits = _mm512_mask_blend_epi32(nan, rounded, quieted);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm512_cvtepi32_epi16(bits));
  }
  for (; i < n; ++i) y[i] = x[i];
}

/// bfloat16::Round's bits of 8 floats, in the low halves of 32-bit lanes:
/// RoundAvx512's arithmetic in AVX2.
__attribute__((target("avx2"))) inline __m256i RoundEightAvx2(const float* x) {
  const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(x));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
  // Magnitudes are below 2^31, so the signed compare orders them.
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m256i quieted = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quieted, nan);
}

/// RoundAvx512 for a CPU with AVX2 only (which stores BFLOAT16 blobs too:
/// DnnlWidens), 16 floats at a time.
__attribute__((target("avx2"))) void RoundAvx2(int64_t n, const float* x, bfloat16* y) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // packus interleaves the two halves by 128-bit lane; the permute
    // restores their order.
    const __m256i packed = _mm256_packus_epi32(RoundEightAvx2(x + i), RoundEightAvx2(x + i + 8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_permute4x64_epi64(packed, 0xd8));
  }
  for (; i < n; ++i) y[i] = x[i];
}

#pragma GCC diagnostic pop

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") != 0;
  return has;
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") != 0;
  return has;
}

}  // namespace

void RoundToBfloat16(int64_t n, const float* x, bfloat16* y) {
  if (HasAvx512()) {
    RoundAvx512(n, x, y);
    return;
  }
  if (HasAvx2()) {
    RoundAvx2(n, x, y);
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}

}  // namespace demi
