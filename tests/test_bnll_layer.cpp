// The BNLL layer: hand-computed values, what Backward reads, in place and
// gradient checks.
#include "neuron_test_util.hpp"

namespace demi {
namespace {

TEST(BNLLLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "BNLL")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // log(1 + e^x) for e^x = 1, 3, 1/3; +-40 neither overflow nor lose the
  // tiny value e^-40 = 4.2483543e-18. dy/dx = sigmoid(x) = 1/2, 3/4, 1/4, 1, e^-40.
  const Pass pass =
      RunLayer(R"(type: "BNLL")", {0, kLn3, -kLn3, 40, -40}, {1, 1, 2, 3, 1}, false, true, false);
  ExpectNear(pass.y, {kLn2, kLn4, std::log(4.0f / 3.0f), 40, 4.2483543e-18f}, 1e-6f);
  EXPECT_NEAR(pass.y[4], 4.2483543e-18f, 1e-24f);
  ExpectNear(pass.dx, {0.5f, 0.75f, 0.5f, 3, 4.2483543e-18f}, 1e-6f);
  EXPECT_NEAR(pass.dx[4], 4.2483543e-18f, 1e-24f);
}

TEST(BNLLLayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "BNLL")", false, 3.0f);
  CheckGradientOnShapes(R"(type: "BNLL")", -4, 4);
}

}  // namespace
}  // namespace demi
