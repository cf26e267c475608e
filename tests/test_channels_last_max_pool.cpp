// The channels-last max pooling kernels against the CAFFE engine's max
// pooling on the same values in Caffe's layout: the same maxima, the same
// winners among ties (small integers tie often), and the same gradient bit
// for bit (FLOAT: added in Caffe's order; 16-bit: rounded once), over
// windows clipped by the image, padded, overlapping, leaving gaps, and
// chunks of channels with a remainder, and shapes that threads split.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "channels_last_test_util.hpp"
#include "demi/layers/channels_last_max_pool.hpp"
#include "demi/util/bfloat16.hpp"
#include "demi/util/float16.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

struct PoolCase {
  std::string name;
  MaxPoolGeometry g;  ///< pooled sizes filled by the CAFFE layer
  std::string param;  ///< the same windows in pooling_param
};

std::vector<PoolCase> Cases() {
  // num, channels, height, width, (pooled), kernel, stride, pad
  return {
      {"3x3_stride2_ceil", {2, 70, 8, 7, 0, 0, 3, 3, 2, 2, 0, 0}, "kernel_size: 3 stride: 2"},
      {"3x3_stride1_pad1", {1, 3, 5, 6, 0, 0, 3, 3, 1, 1, 1, 1}, "kernel_size: 3 stride: 1 pad: 1"},
      {"2x2_stride2", {3, 17, 6, 4, 0, 0, 2, 2, 2, 2, 0, 0}, "kernel_size: 2 stride: 2"},
      {"3x2_stride2x1_pad1x0",
       {2, 5, 7, 5, 0, 0, 3, 2, 2, 1, 1, 0},
       "kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 0"},
      {"2x2_stride3_gaps", {1, 66, 8, 8, 0, 0, 2, 2, 3, 3, 0, 0}, "kernel_size: 2 stride: 3"},
      {"global_5x4", {2, 9, 5, 4, 0, 0, 5, 4, 1, 1, 0, 0}, "kernel_h: 5 kernel_w: 4"},
      // Enough rows that threads split both passes.
      {"threads_3x3_stride2", {2, 64, 40, 40, 0, 0, 3, 3, 2, 2, 0, 0}, "kernel_size: 3 stride: 2"},
  };
}

template <typename T>
void ExpectMatchesCaffeEngine(Type stored) {
  std::mt19937 rng(7);
  for (PoolCase c : Cases()) {
    SCOPED_TRACE(c.name);
    MaxPoolGeometry& g = c.g;
    const int64_t plane = g.height * g.width;
    Blob bottom({g.num, g.channels, g.height, g.width}), top, mask;
    std::vector<float> x(bottom.count());
    std::uniform_int_distribution<int> small(0, 4);
    for (float& v : x) v = static_cast<float>(small(rng));
    FillValues(&bottom, x);
    std::vector<Blob*> bottoms{&bottom}, tops{&top, &mask};
    auto layer = MakeLayer(
        StrCat("type: 'Pooling' pooling_param { pool: MAX engine: CAFFE ", c.param, " }"));
    layer->SetUp(bottoms, tops);
    layer->Forward(bottoms, tops);
    g.pooled_h = top.shape(2);
    g.pooled_w = top.shape(3);
    const int64_t pooled = g.pooled_h * g.pooled_w;
    // dy in T's values: the gradients' sums are then rounded only once.
    std::normal_distribution<float> gaussian;
    std::vector<float> dy(top.count());
    for (float& v : dy) v = static_cast<float>(static_cast<T>(gaussian(rng)));
    std::copy(dy.begin(), dy.end(), top.mutable_cpu_diff());
    layer->Backward(tops, {true}, bottoms);

    const std::vector<T> x_last = ToChannelsLast<T>(x, g.num, g.channels);
    std::vector<T> y_last(top.count());
    std::vector<uint8_t> window(top.count());
    ChannelsLastMaxPoolForward(g, stored, x_last.data(), y_last.data(), window.data());
    const std::vector<T> dy_last = ToChannelsLast<T>(dy, g.num, g.channels);
    std::vector<T> dx_last(bottom.count(), static_cast<T>(-1.0f));  // all overwritten
    ChannelsLastMaxPoolBackward(g, stored, dy_last.data(), window.data(), dx_last.data());

    const std::vector<float> y = DataOf(top), argmax = DataOf(mask), dx = DiffOf(bottom);
    for (int64_t n = 0; n < g.num; ++n) {
      for (int64_t ch = 0; ch < g.channels; ++ch) {
        for (int64_t o = 0; o < pooled; ++o) {
          const int64_t caffe = (n * g.channels + ch) * pooled + o;
          const int64_t last = (n * pooled + o) * g.channels + ch;
          ASSERT_EQ(static_cast<float>(y_last[last]), y[caffe]) << n << " " << ch << " " << o;
          // The window index as a place in the plane.
          const int64_t h = o / g.pooled_w * g.stride_h - g.pad_h + window[last] / g.kernel_w;
          const int64_t w = o % g.pooled_w * g.stride_w - g.pad_w + window[last] % g.kernel_w;
          ASSERT_EQ(static_cast<float>(h * g.width + w), argmax[caffe])
              << n << " " << ch << " " << o;
        }
        for (int64_t p = 0; p < plane; ++p) {
          const float want = static_cast<T>(dx[(n * g.channels + ch) * plane + p]);
          ASSERT_EQ(static_cast<float>(dx_last[(n * plane + p) * g.channels + ch]), want)
              << n << " " << ch << " " << p;
        }
      }
    }
  }
}

// The largest window: its last element's index is 255, the byte's last value.
TEST(ChannelsLastMaxPoolTest, AWindowOf256ElementsNamesItsLast) {
  const MaxPoolGeometry g{1, 2, 16, 16, 1, 1, 16, 16, 1, 1, 0, 0};
  std::vector<float> x(2 * 256);
  for (int64_t p = 0; p < 256; ++p) {
    x[p * 2] = static_cast<float>(p);       // rises to the last pixel
    x[p * 2 + 1] = static_cast<float>(-p);  // falls from the first
  }
  std::vector<float> y(2), dy = {3, 5}, dx(x.size(), -1);
  std::vector<uint8_t> window(2);
  ChannelsLastMaxPoolForward(g, FLOAT, x.data(), y.data(), window.data());
  EXPECT_EQ(y, (std::vector<float>{255, 0}));
  EXPECT_EQ(window, (std::vector<uint8_t>{255, 0}));
  ChannelsLastMaxPoolBackward(g, FLOAT, dy.data(), window.data(), dx.data());
  for (int64_t p = 0; p < 256; ++p) {
    EXPECT_EQ(dx[p * 2], p == 255 ? 3 : 0) << p;
    EXPECT_EQ(dx[p * 2 + 1], p == 0 ? 5 : 0) << p;
  }
}

TEST(ChannelsLastMaxPoolTest, FloatMatchesCaffeEngineBitForBit) {
  ExpectMatchesCaffeEngine<float>(FLOAT);
}

TEST(ChannelsLastMaxPoolTest, Bfloat16MatchesCaffeEngineRoundedOnce) {
  ExpectMatchesCaffeEngine<bfloat16>(BFLOAT16);
}

TEST(ChannelsLastMaxPoolTest, Float16MatchesCaffeEngineRoundedOnce) {
  ExpectMatchesCaffeEngine<float16>(FLOAT16);
}

}  // namespace
}  // namespace demi
