// The AbsVal layer: hand-computed values, what Backward reads, in place and
// gradient checks.
#include "neuron_test_util.hpp"

namespace demi {
namespace {

TEST(AbsValLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheBottom) {
  auto layer = MakeLayer(R"(type: "AbsVal")");
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  const Pass pass =
      RunLayer(R"(type: "AbsVal")", {-2, -0.5f, 0, 1, 3}, {1, 2, 3, 4, 5}, false, false, true);
  ExpectNear(pass.y, {2, 0.5f, 0, 1, 3});
  ExpectNear(pass.dx, {-1, -2, 0, 4, 5});
}

TEST(AbsValLayerTest, InPlaceKeepsACopyOfTheInput) {
  Blob x({5});
  std::vector<Blob*> blobs{&x};
  auto layer = MakeLayer(R"(type: "AbsVal")");
  layer->SetUp(blobs, blobs);
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  const Pass pass =
      RunLayer(R"(type: "AbsVal")", {-2, -0.5f, 0, 1, 3}, {1, 2, 3, 4, 5}, true, true, true);
  ExpectNear(pass.y, {2, 0.5f, 0, 1, 3});
  ExpectNear(pass.dx, {-1, -2, 0, 4, 5});
  ExpectInPlaceMatches(R"(type: "AbsVal")", true);
}

TEST(AbsValLayerTest, Gradient) {
  CheckGradientOnShapes(R"(type: "AbsVal")", -2, 2, 1e-3f, 0.0f, 0.01f);
}

}  // namespace
}  // namespace demi
