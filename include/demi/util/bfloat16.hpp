#ifndef DEMI_UTIL_BFLOAT16_HPP_
#define DEMI_UTIL_BFLOAT16_HPP_

#include <cstdint>

namespace demi {

/// A bfloat16 number: the upper 16 bits of a float, rounded to nearest even
/// (as oneDNN and AVX512_BF16's conversions round). It converts to and from
/// float implicitly, so a loop written for `float*` runs over `bfloat16*`
/// unchanged: each load widens exactly, each store rounds once, and the
/// arithmetic between them stays FLOAT.
struct bfloat16 {
  uint16_t bits;

  bfloat16() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): the point is implicit use
  bfloat16(float value) : bits(Round(value)) {}
  /// Stores into an element in place (a loop storing through it vectorizes;
  /// one through a temporary bfloat16 does not).
  bfloat16& operator=(float value) {
    bits = Round(value);
    return *this;
  }
  // NOLINTNEXTLINE(google-explicit-constructor)
  operator float() const { return __builtin_bit_cast(float, static_cast<uint32_t>(bits) << 16); }

  /// The bits of `value` rounded to bfloat16: to nearest, ties to even; a
  /// NaN stays a (quiet) NaN instead of rounding into infinity.
  static uint16_t Round(float value) {
    const uint32_t u = __builtin_bit_cast(uint32_t, value);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(nan ? (u >> 16) | 0x40u : rounded >> 16);
  }
};

static_assert(sizeof(bfloat16) == 2, "bfloat16 is two bytes");

/// y[i] = x[i] rounded to bfloat16 (bfloat16::Round, bit for bit), for
/// `n` values: 16 per AVX-512 instruction, or 8 per AVX2 one, where the CPU
/// has them. Our loops are compiled for any x86-64, whose SSE2 has no
/// 32-to-16-bit pack: a loop storing bfloat16 element by element spends most
/// of its time rounding, so the 16-bit loops compute a chunk in floats and
/// round it here.
void RoundToBfloat16(int64_t n, const float* x, bfloat16* y);

/// The chunked rounding of a stored type, for loops written once over it.
inline void StoreRounded(int64_t n, const float* x, bfloat16* y) { RoundToBfloat16(n, x, y); }

}  // namespace demi

#endif  // DEMI_UTIL_BFLOAT16_HPP_
