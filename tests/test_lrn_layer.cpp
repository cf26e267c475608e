#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "demi/layers/lrn_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class LRNLayerTest : public ::testing::Test {
 protected:
  /// Sets up `text` on a bottom of `shape` filled with `values` and runs Forward.
  std::unique_ptr<Layer> Run(const std::string& text, const std::vector<int64_t>& shape,
                             const std::vector<float>& values) {
    bottom_.Reshape(shape);
    FillValues(&bottom_, values);
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    return layer;
  }

  Blob bottom_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&bottom_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(LRNLayerTest, AcrossChannelsByHand) {
  // Channels (1, 2, 3) and (0, 1, -1) at two positions; alpha / n = 1, k = 1:
  // scale = 1 + 1+4, 1 + 1+4+9, 1 + 4+9 = 6, 15, 14 and 1 + 0+1, 1 + 0+1+1,
  // 1 + 1+1 = 2, 3, 3; beta 1 divides.
  auto layer = Run(R"(type: "LRN" lrn_param { local_size: 3 alpha: 3 beta: 1 engine: CAFFE })",
                   {1, 3, 1, 2}, {1, 0, 2, 1, 3, -1});
  EXPECT_EQ(top_.shape(), bottom_.shape());
  ExpectNear(DataOf(top_), {1.0f / 6, 0, 2.0f / 15, 1.0f / 3, 3.0f / 14, -1.0f / 3});
  ASSERT_EQ(layer->buffers().size(), 2u);
  EXPECT_EQ(layer->buffers()[0].name, "scale");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  ExpectNear(DataOf(*layer->buffers()[0].blob), {6, 2, 15, 3, 14, 3});
  EXPECT_EQ(layer->buffers()[1].name, "ratio");
  EXPECT_EQ(layer->buffers()[1].lifetime, BufferLifetime::kScratch);

  // k = 2 and beta 0.5: scale 7, 16, 15 -> x / sqrt(scale).
  Run(R"(type: "LRN" lrn_param { local_size: 3 alpha: 3 beta: 0.5 k: 2 })", {1, 3, 1, 1},
      {1, 2, 3});
  ExpectNear(DataOf(top_), {0.37796447f, 0.5f, 0.77459667f});

  // A window wider than the channels: every scale is 1 + 5 / 5 * 14 = 15.
  Run(R"(type: "LRN" lrn_param { local_size: 5 alpha: 5 beta: 1 })", {1, 3, 1, 1}, {1, 2, 3});
  ExpectNear(DataOf(top_), {1.0f / 15, 2.0f / 15, 3.0f / 15});

  // Caffe's defaults (local_size 5, alpha 1, beta 0.75, k 1) on one value 2:
  // 2 * (1 + 4 / 5)^-0.75.
  Run(R"(type: "LRN")", {1, 1, 1, 1}, {2});
  ExpectNear(DataOf(top_), {1.28699132f});
}

TEST_F(LRNLayerTest, WithinChannelByHand) {
  // A 1x3 row (1, 2, 3), local_size 3, alpha / 9 = 1: the window clips at the
  // ends: scale 1 + 1+4, 1 + 1+4+9, 1 + 4+9. k is ignored here, as in Caffe.
  Run(R"(type: "LRN" lrn_param { norm_region: WITHIN_CHANNEL local_size: 3 alpha: 9 beta: 1
         k: 5 })",
      {1, 1, 1, 3}, {1, 2, 3});
  ExpectNear(DataOf(top_), {1.0f / 6, 2.0f / 15, 3.0f / 14});

  // 3x3 (1..9), two channels (the second holds 9..1): corner (0,0) sums
  // 1+4+16+25 = 46, edge (0,1) sums rows 0-1 = 91, centre sums all = 285.
  Run(R"(type: "LRN" lrn_param { norm_region: WITHIN_CHANNEL local_size: 3 alpha: 9 beta: 1 })",
      {1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1});
  EXPECT_NEAR(top_.data_at(0, 0, 0, 0), 1.0f / 47, 1e-7);
  EXPECT_NEAR(top_.data_at(0, 0, 0, 1), 2.0f / 92, 1e-7);
  EXPECT_NEAR(top_.data_at(0, 0, 1, 1), 5.0f / 286, 1e-7);
  // Second channel, corner (2,2) holds 1 and sums 25+16+4+1 = 46 as well.
  EXPECT_NEAR(top_.data_at(0, 1, 2, 2), 1.0f / 47, 1e-7);
  EXPECT_NEAR(top_.data_at(0, 1, 0, 0), 9.0f / (1 + 81 + 64 + 36 + 25), 1e-7);
}

TEST_F(LRNLayerTest, BackwardByHand) {
  // local_size 1, alpha 1, beta 1, k 1: y = x / (1 + x^2), so
  // dy/dx = 1 / s - 2 x^2 / s^2 with s = 1 + x^2; at x = 2: 0.2 - 0.32.
  for (const char* region : {"ACROSS_CHANNELS", "WITHIN_CHANNEL"}) {
    auto layer =
        Run(StrCat("type: 'LRN' lrn_param { local_size: 1 alpha: 1 beta: 1 norm_region: ", region,
                   " }"),
            {1, 1, 1, 1}, {2});
    ExpectNear(DataOf(top_), {0.4f});
    Set(1, 1.0f, top_.mutable_cpu_diff());
    layer->Backward(top_vec_, {true}, bottom_vec_);
    ExpectNear(DiffOf(bottom_), {-0.12f});
  }
}

TEST_F(LRNLayerTest, BackwardReadsTheBottomNotTheTop) {
  for (const char* region : {"ACROSS_CHANNELS", "WITHIN_CHANNEL"}) {
    bottom_.Reshape({2, 4, 3, 3});
    FillGaussian(&bottom_, 3);
    auto layer = MakeLayer(
        StrCat("type: 'LRN' lrn_param { local_size: 3 alpha: 2 norm_region: ", region, " }"));
    EXPECT_TRUE(layer->BackwardReadsBottomData(0));
    EXPECT_FALSE(layer->BackwardReadsTopData(0));
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    FillGaussian(&top_, 4);
    Copy(top_.count(), top_.cpu_data(), top_.mutable_cpu_diff());
    layer->Backward(top_vec_, {true}, bottom_vec_);
    const std::vector<float> expected = DiffOf(bottom_);
    Set(top_.count(), kNaN, top_.mutable_cpu_data());
    Set(bottom_.count(), kNaN, bottom_.mutable_cpu_diff());
    layer->Backward(top_vec_, {true}, bottom_vec_);
    EXPECT_EQ(DiffOf(bottom_), expected) << region;
    for (float v : expected) ASSERT_TRUE(std::isfinite(v)) << region;
  }
}

TEST_F(LRNLayerTest, GradientAcrossChannels) {
  bottom_.Reshape({2, 7, 3, 3});
  FillGaussian(&bottom_, 11);
  auto layer = MakeLayer(R"(type: "LRN" lrn_param { local_size: 5 alpha: 2 beta: 0.75 k: 2 })");
  GradientChecker checker(1e-2f, 2e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(LRNLayerTest, GradientAcrossChannelsOddShape) {
  bottom_.Reshape({1, 13, 1, 2});
  FillGaussian(&bottom_, 12);
  auto layer = MakeLayer(R"(type: "LRN" lrn_param { local_size: 3 alpha: 3 beta: 1 })");
  GradientChecker checker(1e-2f, 2e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(LRNLayerTest, GradientWithinChannel) {
  bottom_.Reshape({2, 3, 5, 4});
  FillGaussian(&bottom_, 13);
  auto layer = MakeLayer(R"(type: "LRN" lrn_param { norm_region: WITHIN_CHANNEL local_size: 3
      alpha: 5 beta: 0.75 })");
  GradientChecker checker(1e-2f, 2e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(LRNLayerTest, GradientWithinChannelWideWindow) {
  bottom_.Reshape({1, 2, 3, 7});
  FillGaussian(&bottom_, 14);
  auto layer = MakeLayer(R"(type: "LRN" lrn_param { norm_region: WITHIN_CHANNEL local_size: 5
      alpha: 10 beta: 1 })");
  GradientChecker checker(1e-2f, 2e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(LRNLayerTest, BadSettingsNameTheLayer) {
  bottom_.Reshape({1, 3, 2, 2});
  ExpectErrorContaining(
      [&] {
        MakeLayer("name: 'norm' type: 'LRN' lrn_param { local_size: 4 }")
            ->SetUp(bottom_vec_, top_vec_);
      },
      {"norm", "odd local_size", "got 4"});
  ExpectErrorContaining(
      [&] { MakeLayer("name: 'norm' type: 'LRN'")->SetUp(bottom_vec_, bottom_vec_); },
      {"norm", "in place"});
  bottom_.Reshape({3, 2, 2});
  ExpectErrorContaining(
      [&] { MakeLayer("name: 'norm' type: 'LRN'")->SetUp(bottom_vec_, top_vec_); },
      {"norm", "4-D", "3 2 2"});
}

}  // namespace
}  // namespace demi
