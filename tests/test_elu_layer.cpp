// The ELU layer: hand-computed values, what Backward reads, in place and
// gradient checks.
#include "neuron_test_util.hpp"

namespace demi {
namespace {

TEST(ELULayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "ELU")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // alpha (e^x - 1) with e^x = 1/4, 1/2; dy/dx = alpha e^x = y + alpha.
  const Pass pass = RunLayer(R"(type: "ELU" elu_param { alpha: 0.5 })", {-kLn4, -kLn2, 0, 1, 3},
                             {1, 2, 3, 4, -5}, false, true, false);
  ExpectNear(pass.y, {-0.375f, -0.25f, 0, 1, 3});
  ExpectNear(pass.dx, {0.125f, 0.5f, 1.5f, 4, -5});
  // The default alpha is 1; alpha 0 is a ReLU.
  ExpectNear(RunLayer(R"(type: "ELU")", {-kLn2, 2}, {1, 1}).y, {-0.5f, 2});
  const Pass relu = RunLayer(R"(type: "ELU" elu_param { alpha: 0 })", {-kLn2, 2}, {3, 3});
  ExpectNear(relu.y, {0, 2});
  ExpectNear(relu.dx, {0, 3});
}

TEST(ELULayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "ELU" elu_param { alpha: 0.7 })", false);
  CheckGradientOnShapes(R"(type: "ELU")", -2, 2, 1e-3f, 0.0f, 0.01f);
  CheckGradientOnShapes(R"(type: "ELU" elu_param { alpha: 0.3 })", -3, 1, 1e-3f, 0.0f, 0.01f);
}

TEST(ELULayerTest, NegativeAlphaIsAnError) {
  ExpectSetUpError(R"(name: "elu" type: "ELU" elu_param { alpha: -1 })",
                   {"ELU layer 'elu'", "non-negative elu_param.alpha, got -1"});
}

}  // namespace
}  // namespace demi
