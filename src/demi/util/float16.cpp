#include "demi/util/float16.hpp"

#include <cpuid.h>
#include <immintrin.h>

namespace demi {

namespace {

/// float16::Round on 8 floats at a time with F16C's conversion, which
/// rounds to nearest even, keeps subnormals and quiets NaNs as it does.
__attribute__((target("avx,f16c"))) void RoundF16c(int64_t n, const float* x, float16* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i bits =
        _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), bits);
  }
  for (; i < n; ++i) y[i] = x[i];
}

__attribute__((target("avx,f16c"))) void WidenF16c(int64_t n, const float16* x, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(bits));
  }
  for (; i < n; ++i) y[i] = x[i];
}

bool HasF16c() {
  // F16C's flag is CPUID leaf 1's ECX bit: __builtin_cpu_supports names it
  // in GCC only (clang, for make fuzz, refuses "f16c").
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 &&
           (ecx & bit_F16C) != 0;
  }();
  return has;
}

}  // namespace

void WidenFloat16(int64_t n, const float16* x, float* y) {
  if (HasF16c()) {
    WidenF16c(n, x, y);
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}

void RoundToFloat16(int64_t n, const float* x, float16* y) {
  if (HasF16c()) {
    RoundF16c(n, x, y);
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}

}  // namespace demi
