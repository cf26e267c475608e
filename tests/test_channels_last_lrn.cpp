// The channels-last LRN kernels against the CAFFE engine's LRN on the same
// values in Caffe's layout: y and the gradient within FLOAT's rounding (the
// kernels take scale^-0.75 from square roots, Caffe from pow), or within a
// bfloat16 ulp (2^-7 relative); each with a slack of 1 % of the largest
// value for the gradient's cancellations. Windows wider than the channels
// included, and a shape that threads split.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "channels_last_test_util.hpp"
#include "demi/layers/channels_last_lrn.hpp"
#include "demi/util/bfloat16.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Each value within `relative` of want's, or of want's largest magnitude.
void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, float relative) {
  ASSERT_EQ(got.size(), want.size());
  float largest = 0;
  for (float v : want) largest = std::max(largest, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], relative * (std::abs(want[i]) + 1e-2f * largest)) << i;
  }
}

template <typename T>
void ExpectMatchesCaffeEngine(Type stored, float relative) {
  struct Case {
    int64_t num, channels, height, width, size;
    float alpha, k;
  };
  std::mt19937 rng(11);
  std::normal_distribution<float> gaussian;
  for (const Case& c : {Case{2, 70, 3, 2, 5, 1e-1f, 1}, Case{1, 3, 2, 2, 7, 2, 2},
                        Case{2, 16, 1, 3, 3, 5e-4f, 1}, Case{2, 64, 16, 16, 5, 1e-1f, 1}}) {
    SCOPED_TRACE(StrCat(c.channels, " channels, local_size ", c.size));
    Blob bottom({c.num, c.channels, c.height, c.width}), top;
    // Values a T holds exactly, so both sides read the same.
    std::vector<float> x(bottom.count()), dy(bottom.count());
    for (float& v : x) v = static_cast<float>(static_cast<T>(3 * gaussian(rng)));
    for (float& v : dy) v = static_cast<float>(static_cast<T>(gaussian(rng)));
    FillValues(&bottom, x);
    std::vector<Blob*> bottoms{&bottom}, tops{&top};
    auto layer = MakeLayer(StrCat("type: 'LRN' lrn_param { engine: CAFFE local_size: ", c.size,
                                  " alpha: ", c.alpha, " beta: 0.75 k: ", c.k, " }"));
    layer->SetUp(bottoms, tops);
    layer->Forward(bottoms, tops);
    std::copy(dy.begin(), dy.end(), top.mutable_cpu_diff());
    layer->Backward(tops, {true}, bottoms);

    const LrnGeometry g{bottom.count() / c.channels, c.channels, c.size, c.alpha, c.k};
    const std::vector<T> x_last = ToChannelsLast<T>(x, c.num, c.channels);
    const std::vector<T> dy_last = ToChannelsLast<T>(dy, c.num, c.channels);
    std::vector<T> y_last(x.size()), dx_last(x.size());
    ChannelsLastLrnForward(g, stored, x_last.data(), y_last.data());
    ChannelsLastLrnBackward(g, stored, x_last.data(), dy_last.data(), dx_last.data());
    ExpectClose(ToCaffeLayout(y_last, c.num, c.channels), DataOf(top), relative);
    ExpectClose(ToCaffeLayout(dx_last, c.num, c.channels), DiffOf(bottom), relative);
  }
}

TEST(ChannelsLastLrnTest, FloatMatchesCaffeEngine) {
  ExpectMatchesCaffeEngine<float>(FLOAT, 1e-5f);
}

TEST(ChannelsLastLrnTest, Bfloat16MatchesCaffeEngineWithinItsRounding) {
  ExpectMatchesCaffeEngine<bfloat16>(BFLOAT16, 1.0f / 128);
}

}  // namespace
}  // namespace demi
