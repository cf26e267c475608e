// The Swish layer: hand-computed values, what Backward reads, in place and
// gradient checks.
#include "neuron_test_util.hpp"

namespace demi {
namespace {

TEST(SwishLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheBottom) {
  auto layer = MakeLayer(R"(type: "Swish")");
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  // sigmoid(+-ln 3) = 3/4, 1/4; dy/dx = s + beta x s (1 - s) with s (1 - s) = 3/16.
  const Pass pass = RunLayer(R"(type: "Swish")", {0, kLn3, -kLn3}, {1, 1, 2}, false, false, true);
  ExpectNear(pass.y, {0, 0.75f * kLn3, -0.25f * kLn3});
  ExpectNear(pass.dx, {0.5f, 0.75f + 0.1875f * kLn3, 2 * (0.25f - 0.1875f * kLn3)});
  // beta 2: sigmoid(2 * ln(3) / 2) = 3/4.
  const Pass beta = RunLayer(R"(type: "Swish" swish_param { beta: 2 })", {kLn3 / 2}, {1});
  ExpectNear(beta.y, {0.375f * kLn3});
  ExpectNear(beta.dx, {0.75f + 0.1875f * kLn3});
}

TEST(SwishLayerTest, InPlaceKeepsACopyOfTheInput) {
  Blob x({5});
  std::vector<Blob*> blobs{&x};
  auto layer = MakeLayer(R"(type: "Swish")");
  layer->SetUp(blobs, blobs);
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  ExpectInPlaceMatches(R"(type: "Swish" swish_param { beta: 0.7 })", true, 2.0f);
}

TEST(SwishLayerTest, Gradient) {
  CheckGradientOnShapes(R"(type: "Swish")", -4, 4);
  CheckGradientOnShapes(R"(type: "Swish" swish_param { beta: 2.5 })", -3, 3, 1e-3f);
}

}  // namespace
}  // namespace demi
