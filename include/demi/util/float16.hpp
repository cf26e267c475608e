#ifndef DEMI_UTIL_FLOAT16_HPP_
#define DEMI_UTIL_FLOAT16_HPP_

#include <cstdint>

namespace demi {

/// An IEEE half-precision number (FLOAT16: 5 exponent bits, 10 mantissa
/// bits), converted to and from float implicitly like bfloat16, so the loops
/// written once over a stored type run over it too: each load widens
/// exactly, each store rounds once, and the arithmetic stays FLOAT (the CPU
/// has no FLOAT16 arithmetic we use).
struct float16 {
  uint16_t bits;

  float16() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): the point is implicit use
  float16(float value) : bits(Round(value)) {}
  float16& operator=(float value) {
    bits = Round(value);
    return *this;
  }
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator float() const { return Widen(bits); }

  /// The bits of `value` in FLOAT16, rounded to nearest, ties to even (as
  /// F16C's conversion rounds): above 65504 into infinity, below 2^-14 into
  /// the subnormals, a NaN into a quiet NaN keeping the top of its payload.
  static uint16_t Round(float value) {
    const uint32_t u = __builtin_bit_cast(uint32_t, value);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t magnitude = u & 0x7fffffffu;
    if (magnitude > 0x7f800000u) {
      return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
    }
    if (magnitude >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 2^16
    const uint32_t exponent = magnitude >> 23;
    if (exponent < 113) {  // a FLOAT16 subnormal (or zero): units of 2^-24
      const uint32_t shift = 126 - exponent;
      if (shift > 24) return static_cast<uint16_t>(sign);
      const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
      return static_cast<uint16_t>(sign | RoundShift(mantissa, shift));
    }
    // Rebias the exponent (127 -> 15); a carry out of the mantissa moves
    // into the exponent, up to infinity at 65520 and above.
    return static_cast<uint16_t>(sign | RoundShift(magnitude - (112u << 23), 13));
  }

  /// The float of FLOAT16 `bits`: exact (a NaN quiet), F16C's bits. Written
  /// without branches, every case computed and one selected, so the loops
  /// of 16-bit layers (`omp simd`) vectorize it.
  static float Widen(uint16_t bits) {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exponent = bits & 0x7c00u;
    const uint32_t mantissa = bits & 0x3ffu;
    // Normal: exponent and mantissa moved into float's places, rebiased
    // (15 -> 127). Subnormal: an integer count of 2^-24, exact in float.
    const uint32_t normal = ((bits & 0x7fffu) << 13) + (112u << 23);
    const uint32_t subnormal =
        __builtin_bit_cast(uint32_t, static_cast<float>(mantissa) * 0x1p-24f);
    // Infinity stays infinite; a NaN widens quiet, as F16C's does.
    const uint32_t special = 0x7f800000u | (mantissa << 13) | (mantissa != 0 ? 0x00400000u : 0u);
    const uint32_t magnitude = exponent == 0x7c00u ? special : exponent == 0 ? subnormal : normal;
    return __builtin_bit_cast(float, sign | magnitude);
  }

 private:
  /// value / 2^shift rounded to nearest, ties to even.
  static uint32_t RoundShift(uint32_t value, uint32_t shift) {
    const uint32_t half = 1u << (shift - 1);
    const uint32_t kept = value >> shift;
    const uint32_t rest = value & ((1u << shift) - 1);
    return kept + (rest > half || (rest == half && (kept & 1u)) ? 1u : 0u);
  }
};

static_assert(sizeof(float16) == 2, "float16 is two bytes");

/// y[i] = x[i] rounded to FLOAT16 (float16::Round, bit for bit), 8 per F16C
/// instruction where the CPU has it, as RoundToBfloat16 does for bfloat16.
void RoundToFloat16(int64_t n, const float* x, float16* y);

/// The chunked rounding of a stored type, for loops written once over it.
inline void StoreRounded(int64_t n, const float* x, float16* y) { RoundToFloat16(n, x, y); }

/// y[i] = x[i] widened to float (exact), 8 per F16C instruction where the CPU
/// has it.
void WidenFloat16(int64_t n, const float16* x, float* y);

}  // namespace demi

#endif  // DEMI_UTIL_FLOAT16_HPP_
