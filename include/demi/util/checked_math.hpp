#ifndef DEMI_UTIL_CHECKED_MATH_HPP_
#define DEMI_UTIL_CHECKED_MATH_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "demi/common.hpp"

namespace demi {

/// Element counts and byte sizes that must never wrap: a product or sum that
/// overflows throws an Error "<what> overflows" instead of returning a small
/// number (a wrapped size plans a tiny arena and reports "0 MiB").
///
/// `what` names the shape, tensor or layer the figure belongs to: a string,
/// or a function returning one, called only on overflow (so hot loops such
/// as the planner's do not build messages they never show).
template <typename What>
[[noreturn]] void ThrowOverflow(const What& what) {
  if constexpr (std::is_invocable_v<What>) {
    ThrowError(StrCat(what(), " overflows"));
  } else {
    ThrowError(StrCat(what, " overflows"));
  }
}

template <typename T, typename What>
T CheckedMul(T a, T b, const What& what) {
  static_assert(std::is_integral_v<T>, "counts and bytes are integers");
  T product = 0;
  if (__builtin_mul_overflow(a, b, &product)) ThrowOverflow(what);
  return product;
}

template <typename T, typename What>
T CheckedAdd(T a, T b, const What& what) {
  static_assert(std::is_integral_v<T>, "counts and bytes are integers");
  T sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) ThrowOverflow(what);
  return sum;
}

/// The product of `dims` (non-negative) in `count`; false if it overflows.
/// A zero dimension makes the product 0 whatever the others are.
inline bool CountOfDims(const std::vector<int64_t>& dims, int64_t* count) {
  int64_t product = 1;
  bool overflows = false;
  for (int64_t dim : dims) {
    if (dim == 0) {
      *count = 0;
      return true;
    }
    overflows = overflows || __builtin_mul_overflow(product, dim, &product);
  }
  *count = product;
  return !overflows;
}

}  // namespace demi

#endif  // DEMI_UTIL_CHECKED_MATH_HPP_
