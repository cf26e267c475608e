#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "demi/layers/spp_layer.hpp"
#include "demi/net.hpp"
#include "gradient_checker.hpp"
#include "net_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class SPPLayerTest : public ::testing::Test {
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

  /// Two 3x3 channels: 1 .. 9 and 9 .. 1.
  std::vector<float> TwoChannels() const {
    std::vector<float> values = Iota(9);
    for (int i = 9; i >= 1; --i) values.push_back(static_cast<float>(i));
    return values;
  }

  Blob bottom_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&bottom_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(SPPLayerTest, ShapesAndBuffers) {
  bottom_.Reshape({2, 3, 7, 6});
  auto layer = MakeLayer(R"(type: "SPP" spp_param { pyramid_height: 3 pool: MAX })");
  layer->SetUp(bottom_vec_, top_vec_);
  // 3 channels x (1 + 4 + 16) bins, flattened and concatenated.
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 63}));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].name, "argmax");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(layer->buffers()[0].blob->shape(), (std::vector<int64_t>{2, 63}));
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));

  auto ave = MakeLayer(R"(type: "SPP" spp_param { pyramid_height: 2 pool: AVE })");
  ave->SetUp(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 15}));
  EXPECT_TRUE(ave->buffers().empty());

  // One level is Caffe's single global Pooling: its 4-D top is kept.
  auto one = MakeLayer(R"(type: "SPP" spp_param { pyramid_height: 1 })");
  one->SetUp(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 3, 1, 1}));
}

TEST_F(SPPLayerTest, MaxByHand) {
  // 3x3 into 2x2 bins: kernel 2, pad (4 - 3 + 1) / 2 = 1, so the bins cover
  // rows {0}, {1, 2} and columns {0}, {1, 2}.
  auto layer =
      Run(R"(type: "SPP" spp_param { pyramid_height: 2 pool: MAX })", {1, 2, 3, 3}, TwoChannels());
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 10}));
  // Level 0: the max of each channel. Level 1, channel 0 ([1 2 3; 4 5 6; 7 8 9]):
  // {1}, {2 3}, {4 7}, {5 6 8 9}; channel 1 ([9 8 7; 6 5 4; 3 2 1]): {9}, {8 7}, {6 3}, {5 4 2 1}.
  EXPECT_EQ(DataOf(top_), (std::vector<float>{9, 9, 1, 3, 7, 9, 9, 8, 6, 5}));
  EXPECT_EQ(DataOf(*layer->buffers()[0].blob), (std::vector<float>{8, 0, 0, 2, 6, 8, 0, 1, 3, 4}));
}

TEST_F(SPPLayerTest, AveByHand) {
  Run(R"(type: "SPP" spp_param { pyramid_height: 2 pool: AVE })", {1, 2, 3, 3}, TwoChannels());
  // Level 0: 45 / 9. Level 1: every window spans 2 x 2 of the padded image, so
  // each divides by 4 (padding counts): channel 0: 1, 2 + 3, 4 + 7, 5 + 6 + 8 + 9;
  // channel 1: 9, 8 + 7, 6 + 3, 5 + 4 + 2 + 1.
  EXPECT_EQ(DataOf(top_),
            (std::vector<float>{5, 5, 0.25f, 1.25f, 2.75f, 7, 2.25f, 3.75f, 2.25f, 3}));
}

TEST_F(SPPLayerTest, ThreeLevelsByHand) {
  // 4x4 (1..16): level 1 has kernel 2 and no pad; level 2 has kernel 1 and
  // copies the image.
  Run(R"(type: "SPP" spp_param { pyramid_height: 3 })", {1, 1, 4, 4}, Iota(16));
  std::vector<float> expected{16, 6, 8, 14, 16};
  for (float v : Iota(16)) expected.push_back(v);
  EXPECT_EQ(DataOf(top_), expected);

  Run(R"(type: "SPP" spp_param { pyramid_height: 3 pool: AVE })", {1, 1, 4, 4}, Iota(16));
  expected = {8.5f, 3.5f, 5.5f, 11.5f, 13.5f};
  for (float v : Iota(16)) expected.push_back(v);
  EXPECT_EQ(DataOf(top_), expected);
}

TEST_F(SPPLayerTest, MaxBackwardRoutesToTheArgmax) {
  auto layer = Run(R"(type: "SPP" spp_param { pyramid_height: 2 })", {1, 2, 3, 3}, TwoChannels());
  FillValues(&top_, Iota(10));
  Copy(top_.count(), top_.cpu_data(), top_.mutable_cpu_diff());
  Set(top_.count(), kNaN, top_.mutable_cpu_data());        // Backward must not read it
  Set(bottom_.count(), kNaN, bottom_.mutable_cpu_diff());  // written, not accumulated
  Set(bottom_.count(), kNaN, bottom_.mutable_cpu_data());
  layer->Backward(top_vec_, {true}, bottom_vec_);
  // Channel 0: dy 1 -> pixel 8; dy 3, 4, 5, 6 -> pixels 0, 2, 6, 8.
  // Channel 1: dy 2 -> pixel 0; dy 7, 8, 9, 10 -> pixels 0, 1, 3, 4.
  EXPECT_EQ(DiffOf(bottom_), (std::vector<float>{3, 0, 4, 0, 0, 0, 5, 0, 7,  //
                                                 9, 8, 0, 9, 10, 0, 0, 0, 0}));
}

TEST_F(SPPLayerTest, AveBackwardSpreadsOverTheWindow) {
  auto layer =
      Run(R"(type: "SPP" spp_param { pyramid_height: 2 pool: AVE })", {1, 1, 3, 3}, Iota(9));
  FillValues(&top_, {9, 4, 8, 12, 16});
  Copy(top_.count(), top_.cpu_data(), top_.mutable_cpu_diff());
  Set(top_.count(), kNaN, top_.mutable_cpu_data());
  Set(bottom_.count(), kNaN, bottom_.mutable_cpu_data());
  layer->Backward(top_vec_, {true}, bottom_vec_);
  // Level 0 gives every pixel 9 / 9 = 1; level 1 gives each window's pixels dy / 4:
  // {0}: 1, {1 2}: 2, {3 6}: 3, {4 5 7 8}: 4.
  EXPECT_EQ(DiffOf(bottom_), (std::vector<float>{2, 3, 3, 4, 5, 5, 4, 5, 5}));
  Set(bottom_.count(), 7.0f, bottom_.mutable_cpu_diff());
  layer->Backward(top_vec_, {false}, bottom_vec_);
  for (float v : DiffOf(bottom_)) EXPECT_EQ(v, 7.0f);
}

TEST_F(SPPLayerTest, ReshapeRecomputesTheBins) {
  auto layer = Run(R"(type: "SPP" spp_param { pyramid_height: 2 })", {1, 2, 3, 3}, TwoChannels());
  bottom_.Reshape({1, 1, 4, 4});
  FillValues(&bottom_, Iota(16));
  layer->Reshape(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(DataOf(top_), (std::vector<float>{16, 6, 8, 14, 16}));
}

TEST_F(SPPLayerTest, GradientMax) {
  bottom_.Reshape({2, 3, 7, 6});
  FillDistinct(&bottom_, 21);
  auto layer = MakeLayer(R"(type: "SPP" spp_param { pyramid_height: 3 pool: MAX })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(SPPLayerTest, GradientAve) {
  bottom_.Reshape({2, 3, 7, 6});
  FillGaussian(&bottom_, 22);
  auto layer = MakeLayer(R"(type: "SPP" spp_param { pyramid_height: 3 pool: AVE })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(SPPLayerTest, GradientOddShapes) {
  struct Case {
    std::vector<int64_t> shape;
    const char* text;
  };
  const std::vector<Case> cases = {
      {{1, 1, 13, 13}, R"(type: "SPP" spp_param { pyramid_height: 3 pool: MAX })"},
      {{1, 2, 13, 13}, R"(type: "SPP" spp_param { pyramid_height: 3 pool: AVE })"},
      {{2, 3, 1, 13}, R"(type: "SPP" spp_param { pyramid_height: 1 pool: MAX })"},
      {{1, 1, 2, 9}, R"(type: "SPP" spp_param { pyramid_height: 2 pool: AVE })"},
  };
  for (const Case& c : cases) {
    bottom_.Reshape(c.shape);
    FillDistinct(&bottom_, 23);
    auto layer = MakeLayer(c.text);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
  }
}

TEST_F(SPPLayerTest, BadSettingsNameTheLayer) {
  bottom_.Reshape({1, 2, 7, 5});
  auto setup = [&](const std::string& settings) {
    MakeLayer("name: 'spp' type: 'SPP' spp_param { " + settings + " }")
        ->SetUp(bottom_vec_, top_vec_);
  };
  ExpectErrorContaining([&] { setup(""); },
                        {"SPP layer 'spp'", "pyramid_height between 1 and 16", "got 0"});
  ExpectErrorContaining([&] { setup("pyramid_height: 17"); }, {"spp", "got 17"});
  ExpectErrorContaining([&] { setup("pyramid_height: 2 pool: STOCHASTIC"); },
                        {"SPP layer 'spp'", "STOCHASTIC"});
  // Width 5 into 4 bins: kernel 2 would need pad (8 - 5 + 1) / 2 = 2.
  ExpectErrorContaining(
      [&] { setup("pyramid_height: 3"); },
      {"SPP layer 'spp'", "1 2 7 5", "4 x 4 bins at pyramid level 2", "kernel 2 x 2", "pad 1 x 2"});
  bottom_.Reshape({2, 7, 5});
  ExpectErrorContaining([&] { setup("pyramid_height: 2"); }, {"SPP layer 'spp'", "4-D", "2 7 5"});
}

// SPP among planned layers: if it read in Backward what it declares it does
// not, the planned net would drift from the unplanned one.
TEST(SPPNetTest, PlannedNetTrainsBitIdenticallyToUnplanned) {
  const char* text = R"(
    layer { name: "data" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 2 dim: 3 dim: 9 dim: 8 }
                               data_filler { type: "gaussian" } } }
    layer { name: "conv1" type: "Convolution" bottom: "x" top: "c1"
            convolution_param { num_output: 4 kernel_size: 3 pad: 1
                                weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "spp_max" type: "SPP" bottom: "c1" top: "s1"
            spp_param { pyramid_height: 3 pool: MAX } }
    layer { name: "conv2" type: "Convolution" bottom: "c1" top: "c2"
            convolution_param { num_output: 2 kernel_size: 1
                                weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "spp_ave" type: "SPP" bottom: "c2" top: "s2"
            spp_param { pyramid_height: 2 pool: AVE } }
    layer { name: "head1" type: "InnerProduct" bottom: "s1" top: "out1" loss_weight: 1
            inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "head2" type: "InnerProduct" bottom: "s2" top: "out2" loss_weight: 1
            inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 } } }
  )";
  ExpectPlannedTrainingMatchesUnplanned(text);
}

}  // namespace
}  // namespace demi
