#include <gtest/gtest.h>

#include <limits>

#include "demi/layers/prelu_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(PReLULayerTest, DefaultSlopeIsAQuarterPerChannel) {
  Blob x({2, 3, 2});
  FillValues(&x, {-4, 2, 0, -8, 1, -1, 4, -2, -0.4f, 3, -12, 5});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "PReLU")");
  layer->SetUp(bottom, top);
  ASSERT_EQ(layer->blobs().size(), 1u);
  EXPECT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(DataOf(*layer->blobs()[0]), (std::vector<float>{0.25f, 0.25f, 0.25f}));
  EXPECT_EQ(y.shape(), x.shape());
  layer->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), (std::vector<float>{-1, 2, 0, -2, 1, -0.25f, 4, -0.5f, -0.1f, 3, -3, 5}));
}

TEST(PReLULayerTest, ForwardWithPerChannelAndSharedSlopes) {
  Blob x({2, 2, 2});
  FillValues(&x, {-4, 2, -1, 3, 1, -2, -6, 0});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "PReLU" prelu_param { filler { type: "constant" value: 0.1 } })");
  layer->SetUp(bottom, top);
  FillValues(layer->blobs()[0].get(), {0.5f, -1});
  layer->Forward(bottom, top);
  // Channel 0 (elements 0-1, 4-5) slope 0.5, channel 1 (2-3, 6-7) slope -1.
  EXPECT_EQ(DataOf(y), (std::vector<float>{-2, 2, 1, 3, 1, -1, 6, 0}));

  auto shared = MakeLayer(R"(type: "PReLU" prelu_param { channel_shared: true
                             filler { type: "constant" value: 0.1 } })");
  shared->SetUp(bottom, top);
  ASSERT_EQ(shared->blobs().size(), 1u);
  EXPECT_EQ(shared->blobs()[0]->num_axes(), 0);
  EXPECT_EQ(DataOf(*shared->blobs()[0]), (std::vector<float>{0.1f}));
  shared->Forward(bottom, top);
  const std::vector<float> expected{-0.4f, 2, -0.1f, 3, 1, -0.2f, -0.6f, 0};
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y.cpu_data()[i], expected[i]) << i;
}

TEST(PReLULayerTest, BackwardMatchesHandComputedAndAccumulatesSlopeGradient) {
  Blob x({1, 2, 2});
  FillValues(&x, {-2, 3, 1, -4});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "PReLU")");
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  layer->SetUp(bottom, top);
  EXPECT_TRUE(layer->buffers().empty());
  FillValues(layer->blobs()[0].get(), {0.5f, 0.1f});
  layer->Forward(bottom, top);
  Set(y.count(), kNaN, y.mutable_cpu_data());
  const std::vector<float> dy{1, 2, 3, 4};
  std::copy(dy.begin(), dy.end(), y.mutable_cpu_diff());
  Blob& slope = *layer->blobs()[0];
  std::copy_n(std::vector<float>{10, 20}.begin(), 2, slope.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);
  // dx = dy where x > 0, slope dy elsewhere; da[c] += sum of dy x where x <= 0:
  // channel 0: 1 * -2; channel 1: 4 * -4.
  EXPECT_EQ(DiffOf(x), (std::vector<float>{0.5f, 2, 3, 0.4f}));
  EXPECT_EQ(DiffOf(slope), (std::vector<float>{8, 4}));

  // Neither gradient when not asked for.
  Set(4, 7.0f, x.mutable_cpu_diff());
  layer->set_param_propagate_down(0, false);
  layer->Backward(top, {false}, bottom);
  EXPECT_EQ(DiffOf(x), (std::vector<float>{7, 7, 7, 7}));
  EXPECT_EQ(DiffOf(slope), (std::vector<float>{8, 4}));
}

TEST(PReLULayerTest, InPlaceKeepsACopyOfTheInputAndMatchesOutOfPlace) {
  Blob x({2, 3, 4, 5});
  FillGaussian(&x, 201);
  Blob dy({2, 3, 4, 5});
  FillGaussian(&dy, 202);
  const std::string text =
      R"(type: "PReLU" prelu_param { filler { type: "uniform" min: -0.5 max: 0.5 } })";

  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto out_of_place = MakeLayer(text);
  out_of_place->SetUp(bottom, top);
  out_of_place->Forward(bottom, top);
  Copy(dy.count(), dy.cpu_data(), y.mutable_cpu_diff());
  out_of_place->Backward(top, {true}, bottom);

  Blob z({2, 3, 4, 5});
  z.CopyFrom(x);
  std::vector<Blob*> in_place{&z};
  auto layer = MakeLayer(text);
  layer->SetUp(in_place, in_place);
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].name, "bottom_copy");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(layer->buffers()[0].blob->count(), x.count());
  EXPECT_EQ(DataOf(*layer->blobs()[0]), DataOf(*out_of_place->blobs()[0]));
  layer->Forward(in_place, in_place);
  EXPECT_EQ(DataOf(z), DataOf(y));
  Set(z.count(), kNaN, z.mutable_cpu_data());  // Backward reads only its copy
  Copy(dy.count(), dy.cpu_data(), z.mutable_cpu_diff());
  layer->Backward(in_place, {true}, in_place);
  EXPECT_EQ(DiffOf(z), DiffOf(x));
  EXPECT_EQ(DiffOf(*layer->blobs()[0]), DiffOf(*out_of_place->blobs()[0]));
}

TEST(PReLULayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {1, 13}, {3, 1}, {2, 127}, {1, 2, 1, 13}, {13, 1, 1}}) {
    for (const char* text :
         {R"(type: "PReLU" prelu_param { filler { type: "uniform" min: -0.5 max: 0.8 } })",
          R"(type: "PReLU" prelu_param { channel_shared: true })"}) {
      SCOPED_TRACE(ShapeString(shape) + " " + text);
      Blob x(shape);
      FillGaussian(&x, 211);
      Blob y;
      std::vector<Blob*> bottom{&x}, top{&y};
      auto layer = MakeLayer(text);
      GradientChecker checker(1e-3f, 1e-3f, 1701, 0.0f, 0.01f);
      checker.CheckGradient(layer.get(), bottom, top);
    }
  }
}

TEST(PReLULayerTest, OneAxisBottomIsAnError) {
  Blob x({5});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(name: "prelu" type: "PReLU")");
  ExpectErrorContaining([&] { layer->SetUp(bottom, top); },
                        {"PReLU layer 'prelu'", "at least 2 axes", "5 (5)"});
}

TEST(PReLULayerTest, PreloadedSlopesOfTheWrongShapeAreAnError) {
  Blob x({2, 2, 3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(name: "prelu" type: "PReLU"
                            blobs { shape { dim: 3 } data: 1 data: 2 data: 3 })");
  ExpectErrorContaining(
      [&] { layer->SetUp(bottom, top); },
      {"PReLU layer 'prelu'", "slopes of shape 3 (3)", "2 2 3 (12)", "needs 2 (2)"});
  auto shared = MakeLayer(R"(name: "prelu" type: "PReLU" prelu_param { channel_shared: true }
                             blobs { shape { dim: 2 } data: 1 data: 2 })");
  ExpectErrorContaining([&] { shared->SetUp(bottom, top); },
                        {"slopes of shape 2 (2)", "needs  (1)"});
  // Slopes of the right shape are kept, not refilled.
  auto loaded = MakeLayer(R"(type: "PReLU" blobs { shape { dim: 2 } data: 3 data: -1 })");
  loaded->SetUp(bottom, top);
  EXPECT_EQ(DataOf(*loaded->blobs()[0]), (std::vector<float>{3, -1}));
}

}  // namespace
}  // namespace demi
