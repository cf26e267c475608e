// The Clip layer: hand-computed values, what Backward reads, in place and
// gradient checks.
#include "neuron_test_util.hpp"

namespace demi {
namespace {

TEST(ClipLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  const std::string text = R"(type: "Clip" clip_param { min: -1 max: 2 })";
  auto layer = MakeLayer(text);
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // The gradient passes strictly inside (min, max) only, also at x = min, max.
  const Pass pass =
      RunLayer(text, {-3, -1, 0.5f, 2, 5, 1.99f}, {1, 2, 3, 4, 5, 6}, false, true, false);
  ExpectNear(pass.y, {-1, -1, 0.5f, 2, 2, 1.99f});
  ExpectNear(pass.dx, {0, 0, 3, 0, 0, 6});
}

TEST(ClipLayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "Clip" clip_param { min: 0 max: 6 })", false, 4.0f);
  // Inputs in [-3, 9) with none within 0.02 of min 0 or max 6.
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {1}, {13}, {127}, {1, 13, 1, 1}}) {
    SCOPED_TRACE(ShapeString(shape));
    Blob x(shape);
    FillUniform(&x, 61, -3, 9);
    float* data = x.mutable_cpu_data();
    for (int64_t i = 0; i < x.count(); ++i) {
      if (std::fabs(data[i]) < 0.02f || std::fabs(data[i] - 6) < 0.02f) data[i] += 0.05f;
    }
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(R"(type: "Clip" clip_param { min: 0 max: 6 })");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

TEST(ClipLayerTest, MissingOrInvertedBoundsAreErrors) {
  ExpectSetUpError(R"(name: "clip" type: "Clip" clip_param { min: 0 })",
                   {"Clip layer 'clip'", "clip_param { min max } with min < max", "max 0 (unset)"});
  ExpectSetUpError(R"(name: "clip" type: "Clip" clip_param { min: 3 max: 3 })",
                   {"Clip layer 'clip'", "got min 3 and max 3"});
  ExpectSetUpError(R"(name: "clip" type: "Clip")", {"min 0 (unset) and max 0 (unset)"});
}

}  // namespace
}  // namespace demi
