// The Log layer: hand-computed values, what Backward reads, in place and
// gradient checks.
#include "neuron_test_util.hpp"

namespace demi {
namespace {

TEST(LogLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "Log")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // log2(1 + 2x) of 1, 2, 4, 8; dy/dx = 2 / ((1 + 2x) ln 2).
  const Pass base2 = RunLayer(R"(type: "Log" log_param { base: 2 scale: 2 shift: 1 })",
                              {0, 0.5f, 1.5f, 3.5f}, {1, 1, 1, 1}, false, true, false);
  ExpectNear(base2.y, {0, 1, 2, 3});
  ExpectNear(base2.dx, {2 / kLn2, 1 / kLn2, 0.5f / kLn2, 0.25f / kLn2}, 1e-5f);
  const Pass natural = RunLayer(R"(type: "Log")", {1, 4, 0.25f}, {1, 2, 1}, false, true, false);
  ExpectNear(natural.y, {0, kLn4, -kLn4});
  ExpectNear(natural.dx, {1, 0.5f, 4}, 1e-5f);
}

TEST(LogLayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "Log" log_param { shift: 20 })", false);
  CheckGradientOnShapes(R"(type: "Log")", 0.5f, 3, 1e-3f);
  CheckGradientOnShapes(R"(type: "Log" log_param { base: 10 scale: 3 shift: 2 })", 0, 1, 1e-3f);
  CheckGradientOnShapes(R"(type: "Log" log_param { base: 0.5 scale: -1 shift: 2 })", -1, 1, 1e-3f);
}

TEST(LogLayerTest, BadBaseIsAnError) {
  ExpectSetUpError(R"(name: "log" type: "Log" log_param { base: 1 })",
                   {"Log layer 'log'", "log_param.base > 0 and != 1 (or -1 for e), got 1"});
  ExpectSetUpError(R"(name: "log" type: "Log" log_param { base: -3 })", {"got -3"});
}

}  // namespace
}  // namespace demi
