#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "demi/layers/bnll_layer.hpp"
#include "demi/layers/clip_layer.hpp"
#include "demi/layers/elementwise.hpp"
#include "demi/layers/elu_layer.hpp"
#include "demi/layers/sigmoid_layer.hpp"
#include "demi/layers/swish_layer.hpp"
#include "demi/util/math.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

/// Inputs across the formulas' branches, with the extremes that overflow a
/// naive exp.
std::vector<float> Samples() {
  std::vector<float> x{0.0f, -0.0f, 1e-7f, -1e-7f, 88.0f, -88.0f, 100.0f, -100.0f};
  for (int i = -40; i <= 40; ++i) x.push_back(0.37f * static_cast<float>(i));
  return x;
}

// The formulas are written once with the float C functions so the CUDA
// kernels can call them; on the host they must give the bits the layers'
// std:: loops gave before.
TEST(ElementwiseFormulasTest, MatchTheHostLoopsBitForBit) {
  for (float x : Samples()) {
    EXPECT_TRUE(SameBits(SigmoidForward{}(x), 0.5f * std::tanh(0.5f * x) + 0.5f)) << x;
    const float bnll = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    EXPECT_TRUE(SameBits(BNLLForward{}(x), bnll)) << x;
    EXPECT_TRUE(SameBits(BNLLBackward{}(x, 0.3f), -std::expm1(-x) * 0.3f)) << x;
    EXPECT_TRUE(SameBits(ELUForward{0.7f}(x), x > 0 ? x : 0.7f * std::expm1(x))) << x;
    EXPECT_TRUE(SameBits(ClipForward{-1.5f, 2.0f}(x), std::min(std::max(x, -1.5f), 2.0f))) << x;
    const float s = 0.5f * std::tanh(0.5f * 1.3f * x) + 0.5f;
    EXPECT_TRUE(SameBits(SwishForward{1.3f}(x), x * s)) << x;
  }
}

TEST(ElementwiseFormulasTest, ClipKeepsNaN) {
  EXPECT_TRUE(std::isnan(ClipForward{-1.0f, 1.0f}(kNaN)));
}

TEST(ElementwiseMapTest, HostMapAppliesTheFormulaToEveryElementOfOddSizes) {
  for (int64_t n : {1, 13, 127, 4099}) {
    std::vector<float> x(n), y(n, kNaN), dy(n), dx(n, kNaN);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = 0.01f * static_cast<float>(i - n / 2);
      dy[i] = 1.0f + 0.001f * static_cast<float>(i);
    }
    Map(Device::kCPU, n, x.data(), y.data(), ELUForward{0.5f});
    Map(Device::kCPU, n, y.data(), dy.data(), dx.data(), ELUBackward{0.5f});
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(SameBits(y[i], ELUForward{0.5f}(x[i]))) << n << " " << i;
      ASSERT_TRUE(SameBits(dx[i], ELUBackward{0.5f}(y[i], dy[i]))) << n << " " << i;
    }
  }
}

TEST(ElementwiseMapTest, MapBackwardReadsTheGivenDataAndTheTopsDiff) {
  Blob x({5}), top({5}), bottom({5});
  FillValues(&x, {-2, -1, 0, 1, 2});
  FillValues(&top, {9, 9, 9, 9, 9});  // data that the backward must not read
  Copy(5, std::vector<float>{1, 2, 3, 4, 5}.data(), top.mutable_cpu_diff());
  MapBackward(Device::kCPU, x, top, &bottom, ClipBackward{-1.5f, 1.5f});
  EXPECT_EQ(DiffOf(bottom), (std::vector<float>{0, 2, 3, 4, 0}));
}

}  // namespace
}  // namespace demi
