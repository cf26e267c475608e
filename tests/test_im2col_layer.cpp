#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "demi/layers/im2col_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class Im2colLayerTest : public ::testing::Test {
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

TEST_F(Im2colLayerTest, ForwardByHand) {
  // x = [1 2 3; 4 5 6; 7 8 9], 2x2 windows at (0,0) (0,1) (1,0) (1,1).
  auto layer = Run(R"(type: "Im2col" convolution_param { kernel_size: 2 })", {1, 1, 3, 3}, Iota(9));
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 4, 2, 2}));
  // Channel k = kernel cell (i, j); its plane holds that cell of every window.
  EXPECT_EQ(DataOf(top_), (std::vector<float>{1, 2, 4, 5,     // (0,0)
                                              2, 3, 5, 6,     // (0,1)
                                              4, 5, 7, 8,     // (1,0)
                                              5, 6, 8, 9}));  // (1,1)
  EXPECT_TRUE(layer->buffers().empty());
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
}

TEST_F(Im2colLayerTest, ForwardByHandPadStrideTwoChannels) {
  // Two 2x3 channels, kernel 2, stride 2, pad 1: out = (2 + 2 - 2) / 2 + 1 = 2 rows,
  // (3 + 2 - 2) / 2 + 1 = 2 columns; windows start at (-1,-1) (-1,1) (1,-1) (1,1).
  Run(R"(type: "Im2col" convolution_param { kernel_size: 2 stride: 2 pad: 1 })", {1, 2, 2, 3},
      {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6});
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 8, 2, 2}));
  EXPECT_EQ(DataOf(top_),
            (std::vector<float>{0, 0, 0, 5,  // channel 0, cell (0,0)
                                0, 0, 4, 6,  // (0,1)
                                0, 2, 0, 0,  // (1,0)
                                1, 3, 0, 0,  // (1,1)
                                0, 0, 0, -5, 0, 0, -4, -6, 0, -2, 0, 0, -1, -3, 0, 0}));
}

TEST_F(Im2colLayerTest, ForwardByHandDilationAndRectangularKernel) {
  // 1x5 row, kernel 1x2 with dilation 3: pairs (x[w], x[w + 3]) for w = 0, 1.
  Run(R"(type: "Im2col" convolution_param { kernel_h: 1 kernel_w: 2 dilation: 3 })", {1, 1, 1, 5},
      {10, 20, 30, 40, 50});
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 2, 1, 2}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{10, 20, 40, 50}));
}

TEST_F(Im2colLayerTest, BackwardSumsOverlappingWindows) {
  auto layer = Run(R"(type: "Im2col" convolution_param { kernel_size: 2 })", {1, 1, 3, 3}, Iota(9));
  Set(top_.count(), 1.0f, top_.mutable_cpu_diff());
  Set(top_.count(), kNaN, top_.mutable_cpu_data());        // Backward must not read it
  Set(bottom_.count(), kNaN, bottom_.mutable_cpu_diff());  // written, not accumulated
  layer->Backward(top_vec_, {true}, bottom_vec_);
  // How many 2x2 windows cover each pixel.
  EXPECT_EQ(DiffOf(bottom_), (std::vector<float>{1, 2, 1, 2, 4, 2, 1, 2, 1}));

  Set(bottom_.count(), 7.0f, bottom_.mutable_cpu_diff());
  layer->Backward(top_vec_, {false}, bottom_vec_);
  for (float v : DiffOf(bottom_)) EXPECT_EQ(v, 7.0f);
}

TEST_F(Im2colLayerTest, Gradient) {
  bottom_.Reshape({2, 3, 6, 5});
  FillGaussian(&bottom_, 3);
  auto layer = MakeLayer(R"(type: "Im2col" convolution_param { kernel_size: 3 stride: 2 pad: 1 })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(Im2colLayerTest, GradientOddShapes) {
  const std::vector<std::string> settings{
      "kernel_h: 1 kernel_w: 4 pad_h: 0 pad_w: 2 stride_h: 1 stride_w: 3", "kernel_size: 1",
      "kernel_size: 2 dilation: 2 pad: 1"};
  for (const std::string& text : settings) {
    bottom_.Reshape({1, 2, 1, 13});
    FillGaussian(&bottom_, 4);
    auto layer = MakeLayer("type: 'Im2col' convolution_param { " + text + " }");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
  }
}

TEST_F(Im2colLayerTest, FollowsANewBottomShape) {
  auto layer = Run(R"(type: "Im2col" convolution_param { kernel_size: 2 })", {1, 1, 3, 3}, Iota(9));
  bottom_.Reshape({2, 3, 4, 5});
  layer->Reshape(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 12, 3, 4}));
}

TEST_F(Im2colLayerTest, BadSettingsNameTheLayer) {
  bottom_.Reshape({1, 2, 3, 3});
  auto setup = [&](const std::string& settings) {
    MakeLayer("name: 'cols' type: 'Im2col' convolution_param { " + settings + " }")
        ->SetUp(bottom_vec_, top_vec_);
  };
  ExpectErrorContaining([&] { setup(""); },
                        {"Im2col layer 'cols'", "needs kernel_size or kernel_h and kernel_w"});
  ExpectErrorContaining([&] { setup("kernel_size: 2 stride: 0"); },
                        {"Im2col layer 'cols'", "non-zero stride"});
  ExpectErrorContaining([&] { setup("kernel_size: 2 axis: 3"); },
                        {"Im2col layer 'cols'", "axis 3", "axis 1"});
  ExpectErrorContaining(
      [&] { setup("kernel_size: 4"); },
      {"Im2col layer 'cols'", "dilated kernel (4 x 4)", "1 2 3 3", "padded by 0 x 0"});
  bottom_.Reshape({2, 3, 3});
  ExpectErrorContaining([&] { setup("kernel_size: 2"); }, {"Im2col layer 'cols'", "4-D", "2 3 3"});

  bottom_.Reshape({1, 2, 3, 3});
  auto layer = MakeLayer(R"(name: "cols" type: "Im2col" convolution_param { kernel_size: 2 })");
  layer->SetUp(bottom_vec_, top_vec_);
  bottom_.Reshape({6, 9});
  ExpectErrorContaining([&] { layer->Reshape(bottom_vec_, top_vec_); },
                        {"Im2col layer 'cols'", "4-D", "6 9"});
}

}  // namespace
}  // namespace demi
