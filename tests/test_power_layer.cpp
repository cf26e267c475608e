// The Power layer: hand-computed values, what Backward reads, in place and
// gradient checks.
#include "neuron_test_util.hpp"

namespace demi {
namespace {

TEST(PowerLayerTest, SquareMatchesHandComputed) {
  const std::string text = R"(type: "Power" power_param { power: 2 scale: 3 shift: 1 })";
  auto layer = MakeLayer(text);
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  // shift + scale x = -2, 1, 2.5, 7; dy/dx = 2 * 3 * (shift + scale x).
  const Pass pass = RunLayer(text, {-1, 0, 0.5f, 2}, {1, 1, 1, 2}, false, false, true);
  ExpectNear(pass.y, {4, 1, 6.25f, 49});
  ExpectNear(pass.dx, {-12, 6, 15, 84});
}

TEST(PowerLayerTest, SquareRootAndDefaultsMatchHandComputed) {
  const Pass root =
      RunLayer(R"(type: "Power" power_param { power: 0.5 })", {4, 9, 0.25f}, {1, 3, 1});
  ExpectNear(root.y, {2, 3, 0.5f});
  ExpectNear(root.dx, {0.25f, 0.5f, 1});  // 1 / (2 sqrt(x))
  const Pass identity = RunLayer(R"(type: "Power")", {-1.5f, 2}, {4, 5});
  ExpectNear(identity.y, {-1.5f, 2});
  ExpectNear(identity.dx, {4, 5});
}

TEST(PowerLayerTest, ConstantDerivativeReadsNoData) {
  for (const char* text : {R"(type: "Power" power_param { scale: 0.5 shift: 2 })",
                           R"(type: "Power" power_param { power: 0 scale: 2 })",
                           R"(type: "Power" power_param { power: 3 scale: 0 shift: 2 })"}) {
    SCOPED_TRACE(text);
    auto layer = MakeLayer(text);
    EXPECT_FALSE(layer->BackwardReadsBottomData(0));
    EXPECT_FALSE(layer->BackwardReadsTopData(0));
  }
  const Pass affine = RunLayer(R"(type: "Power" power_param { scale: 0.5 shift: 2 })", {-2, 4},
                               {1, -2}, false, true, true);
  ExpectNear(affine.y, {1, 4});
  ExpectNear(affine.dx, {0.5f, -1});
  const Pass one = RunLayer(R"(type: "Power" power_param { power: 0 scale: 2 })", {-2, 4}, {1, -2},
                            false, true, true);
  ExpectNear(one.y, {1, 1});
  ExpectNear(one.dx, {0, 0});
  const Pass cube = RunLayer(R"(type: "Power" power_param { power: 3 scale: 0 shift: 2 })", {-2, 4},
                             {1, -2}, true, true, true);
  ExpectNear(cube.y, {8, 8});
  ExpectNear(cube.dx, {0, 0});
}

TEST(PowerLayerTest, InPlaceKeepsACopyOnlyWhenTheDerivativeVaries) {
  Blob x({3});
  std::vector<Blob*> blobs{&x};
  auto square = MakeLayer(R"(type: "Power" power_param { power: 2 })");
  square->SetUp(blobs, blobs);
  EXPECT_FALSE(square->BackwardReadsBottomData(0));
  ASSERT_EQ(square->buffers().size(), 1u);
  EXPECT_EQ(square->buffers()[0].name, "bottom_copy");
  EXPECT_EQ(square->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(square->buffers()[0].blob->count(), 3);
  auto affine = MakeLayer(R"(type: "Power" power_param { scale: 2 })");
  affine->SetUp(blobs, blobs);
  EXPECT_TRUE(affine->buffers().empty());
  Blob y;
  std::vector<Blob*> top{&y};
  auto out_of_place = MakeLayer(R"(type: "Power" power_param { power: 2 })");
  out_of_place->SetUp(blobs, top);
  EXPECT_TRUE(out_of_place->buffers().empty());

  ExpectInPlaceMatches(R"(type: "Power" power_param { power: 2 scale: -0.5 shift: 0.25 })", true);
  ExpectInPlaceMatches(R"(type: "Power" power_param { power: 1 scale: -0.5 shift: 0.25 })", true);
}

TEST(PowerLayerTest, Gradient) {
  CheckGradientOnShapes(R"(type: "Power" power_param { power: 2 scale: 3 shift: 1 })", -1, 1);
  CheckGradientOnShapes(R"(type: "Power" power_param { power: 3 scale: -0.5 shift: 0.2 })", -2, 2);
  CheckGradientOnShapes(R"(type: "Power" power_param { power: 0.5 })", 0.5f, 2);
  CheckGradientOnShapes(R"(type: "Power" power_param { power: -1.5 shift: 3 })", -1, 1);
  CheckGradientOnShapes(R"(type: "Power" power_param { scale: 0.5 shift: 2 })", -1, 1);
}

}  // namespace
}  // namespace demi
