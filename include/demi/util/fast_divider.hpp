#ifndef DEMI_UTIL_FAST_DIVIDER_HPP_
#define DEMI_UTIL_FAST_DIVIDER_HPP_

// Division of 64-bit indices by a divisor fixed before a kernel runs (a
// channel count, a spatial size): one high multiply, an add and a shift in
// place of a 64-bit division, which a GPU emulates in dozens of instructions
// per element. Granlund and Montgomery's method ("Division by invariant
// integers using multiplication", 1994, section 4): with l = ceil(log2 d) and
// m = floor(2^64 (2^l - d) / d) + 1, n / d = (mulhi(m, n) + n) >> l for
// every n < 2^64; n < 2^63 here (int64 indices), so the add cannot overflow.
#include <cstdint>

#include "demi/util/host_device.hpp"

namespace demi {

class FastDivider {
 public:
  FastDivider() = default;
  /// `divisor` >= 1 (a shape dimension of a tensor with elements).
  explicit FastDivider(int64_t divisor) : divisor_(divisor < 1 ? 1 : divisor) {
    const auto d = static_cast<uint64_t>(divisor_);
    while ((uint64_t{1} << shift_) < d) ++shift_;
    const unsigned __int128 numerator =
        (static_cast<unsigned __int128>(1) << 64) * ((uint64_t{1} << shift_) - d);
    magic_ = static_cast<uint64_t>(numerator / d) + 1;
  }

  DEMI_HOST_DEVICE int64_t divisor() const { return divisor_; }

  /// n / divisor for 0 <= n < 2^63.
  DEMI_HOST_DEVICE int64_t Divide(int64_t n) const {
    const auto u = static_cast<uint64_t>(n);
#ifdef __CUDA_ARCH__
    const uint64_t high = __umul64hi(magic_, u);
#else
    const auto high = static_cast<uint64_t>((static_cast<unsigned __int128>(magic_) * u) >> 64);
#endif
    return static_cast<int64_t>((high + u) >> shift_);
  }

  /// n % divisor for 0 <= n < 2^63.
  DEMI_HOST_DEVICE int64_t Remainder(int64_t n) const { return n - Divide(n) * divisor_; }

 private:
  int64_t divisor_ = 1;
  uint64_t magic_ = 1;
  int shift_ = 0;
};

/// The channel of element i of an outer x channels x inner tensor, by two
/// fast divisions: (i / inner) % channels.
struct ChannelOf {
  FastDivider inner, channels;
  ChannelOf(int64_t inner_size, int64_t channel_count)
      : inner(inner_size), channels(channel_count) {}
  DEMI_HOST_DEVICE int64_t operator()(int64_t i) const {
    return channels.Remainder(inner.Divide(i));
  }
};

/// Where a blob's channels lie for the GPU's per-channel kernels: element
/// (o, c, j) at (o * channels + c) * inner + j. Caffe's layout of a num x
/// channels x spatial blob is that with outer = num, inner = spatial;
/// channels last (NHWC) is outer = num * spatial, inner = 1.
struct ChannelAxis {
  int64_t outer = 0, channels = 0, inner = 0;

  static ChannelAxis Of(int64_t num, int64_t channels, int64_t spatial, bool channels_last) {
    return channels_last ? ChannelAxis{num * spatial, channels, 1}
                         : ChannelAxis{num, channels, spatial};
  }
  ChannelOf channel_of() const { return ChannelOf(inner, channels); }
};

}  // namespace demi

#endif  // DEMI_UTIL_FAST_DIVIDER_HPP_
