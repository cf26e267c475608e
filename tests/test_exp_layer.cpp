// The Exp layer: hand-computed values, what Backward reads, in place and
// gradient checks.
#include "neuron_test_util.hpp"

namespace demi {
namespace {

TEST(ExpLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "Exp")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // 2^(1 + x); dy/dx = y ln 2.
  const Pass base2 = RunLayer(R"(type: "Exp" exp_param { base: 2 shift: 1 })", {0, 1, -1, 2},
                              {1, 1, 2, 0.5f}, false, true, false);
  ExpectNear(base2.y, {2, 4, 1, 8});
  ExpectNear(base2.dx, {2 * kLn2, 4 * kLn2, 2 * kLn2, 4 * kLn2});
  // e^(2x): e^(ln 3) = 3; dy/dx = 2 y.
  const Pass natural = RunLayer(R"(type: "Exp" exp_param { scale: 2 })", {0, kLn3 / 2, -kLn2 / 2},
                                {1, 1, 1}, false, true, false);
  ExpectNear(natural.y, {1, 3, 0.5f});
  ExpectNear(natural.dx, {2, 6, 1});
}

TEST(ExpLayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "Exp" exp_param { base: 3 scale: -0.5 shift: 0.2 })", false);
  CheckGradientOnShapes(R"(type: "Exp")", -2, 2, 1e-3f);
  CheckGradientOnShapes(R"(type: "Exp" exp_param { base: 0.5 scale: 1.5 shift: -1 })", -2, 2,
                        1e-3f);
}

TEST(ExpLayerTest, BadBaseIsAnError) {
  ExpectSetUpError(R"(name: "exp" type: "Exp" exp_param { base: -2 })",
                   {"Exp layer 'exp'", "exp_param.base > 0 (or -1 for e), got -2"});
  ExpectSetUpError(R"(name: "exp" type: "Exp" exp_param { base: 0 })", {"got 0"});
}

}  // namespace
}  // namespace demi
