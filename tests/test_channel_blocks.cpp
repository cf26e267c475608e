// util/channel_blocks.hpp's StoreChannelElementChain: z = first(k, c) and y =
// then(z as stored, c) in one pass, in Caffe's layout, channel-blocked and
// channels last, over rows longer than one rounding chunk and pixels that
// straddle chunks, in float and both 16-bit types.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "demi/util/bfloat16.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/float16.hpp"

namespace demi {
namespace {

/// Element k's channel in layout `t` (ChannelBlocks' formula).
int64_t ChannelOf(const ChannelBlocks& t, int64_t k) {
  const int64_t row = k / t.row_size();
  return row % t.blocks() * t.block + k % t.block;
}

template <typename T>
void ExpectChainReadsTheStoredValue() {
  // 2 x 32 x 40: 40 * 16 = 640 elements a blocked row, 1280 per row of
  // block 1 with inner 1280 (more than a 1024-element chunk); channels last,
  // pixels of 192 channels (a chunk ends inside one) and of 1040 (more than
  // a chunk).
  for (const ChannelBlocks& t : {ChannelBlocks{2, 32, 40, 16}, ChannelBlocks{2, 3, 1280, 1},
                                 ChannelBlocks{2, 192, 7, 192}, ChannelBlocks{2, 1040, 3, 1040}}) {
    SCOPED_TRACE(testing::Message() << "block " << t.block);
    const int64_t n = t.outer * t.channels * t.inner;
    std::vector<T> z(n), y(n);
    // The channel first was given for each element: a lane off by one shows.
    std::vector<int64_t> first_channel(n, -1);
    // first: a value that 16-bit types round (a third of k), small enough
    // for float16, plus a term of the channel; then: of both.
    const auto value = [](int64_t k, int64_t c) {
      return static_cast<float>(k % 97) / 3.0f + static_cast<float>(c % 5);
    };
    const auto first = [&](int64_t k, int64_t c) {
      first_channel[k] = c;
      return value(k, c);
    };
    const auto then = [](float stored, int64_t c) {
      return stored * 2.0f - static_cast<float>(c % 7);
    };
    StoreChannelElementChain(t, z.data(), y.data(), first, then);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t c = ChannelOf(t, k);
      ASSERT_EQ(first_channel[k], c) << k;
      const float stored = static_cast<float>(static_cast<T>(value(k, c)));
      ASSERT_EQ(static_cast<float>(z[k]), stored) << k;
      ASSERT_EQ(static_cast<float>(y[k]), static_cast<float>(static_cast<T>(then(stored, c)))) << k;
    }
  }
}

TEST(ChannelBlocksTest, ChainReadsTheFirstValueAsStored) {
  ExpectChainReadsTheStoredValue<float>();
  ExpectChainReadsTheStoredValue<bfloat16>();
  ExpectChainReadsTheStoredValue<float16>();
}

}  // namespace
}  // namespace demi
