// util/fast_divider.hpp against the hardware's division: every divisor shape a
// kernel sees (1, powers of two, odd spatial sizes, 2^31 +- 1, past 32 bits)
// with numerators at the edges of each quotient and across the int64 range.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "demi/util/fast_divider.hpp"

namespace demi {
namespace {

constexpr int64_t kMaxIndex = INT64_MAX;

TEST(FastDividerTest, DividesAsTheHardwareDoes) {
  std::vector<int64_t> divisors = {1,
                                   2,
                                   3,
                                   7,
                                   49,
                                   64,
                                   3136,
                                   12544,
                                   50176,
                                   (1LL << 31) - 1,
                                   1LL << 31,
                                   (1LL << 31) + 1,
                                   (1LL << 32) + 3,
                                   1LL << 40,
                                   (1LL << 62) + 1,
                                   kMaxIndex};
  std::mt19937_64 rng(1701);
  for (int i = 0; i < 200; ++i)
    divisors.push_back(static_cast<int64_t>(rng() >> (1 + rng() % 63)) + 1);
  for (int64_t d : divisors) {
    const FastDivider divider(d);
    ASSERT_EQ(divider.divisor(), d);
    std::vector<int64_t> numerators = {0, 1, d - 1, d, kMaxIndex, kMaxIndex - 1, kMaxIndex - d};
    for (int64_t q : {int64_t{1}, int64_t{2}, int64_t{1000}, kMaxIndex / d}) {
      if (q > kMaxIndex / d) continue;
      numerators.push_back(q * d);
      numerators.push_back(q * d - 1);
      if (q * d < kMaxIndex) numerators.push_back(q * d + 1);
    }
    for (int i = 0; i < 2000; ++i) {
      numerators.push_back(static_cast<int64_t>(rng() >> 1));
      numerators.push_back(static_cast<int64_t>(rng() >> 33));  // indices of real tensors
    }
    for (int64_t n : numerators) {
      if (n < 0) continue;
      ASSERT_EQ(divider.Divide(n), n / d) << n << " / " << d;
      ASSERT_EQ(divider.Remainder(n), n % d) << n << " % " << d;
    }
  }
}

TEST(FastDividerTest, FindsTheChannelOfAnElement) {
  const ChannelOf channel_of(/*inner=*/49, /*channels=*/2048);
  for (int64_t i = 0; i < 64 * 2048 * 49; i += 97) ASSERT_EQ(channel_of(i), i / 49 % 2048) << i;
}

}  // namespace
}  // namespace demi
