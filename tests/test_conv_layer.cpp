#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "demi/layers/conv_layer.hpp"
#include "demi/net.hpp"
#include "gradient_checker.hpp"
#include "net_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Settings of a direct (loop-by-loop) convolution, the test's reference.
struct Direct {
  int64_t num_output, group, kh, kw, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
};

/// y[n, m, oh, ow] = b[m] + sum over the group's channels and kernel cells,
/// reading x directly at the dilated, strided, padded position.
std::vector<float> DirectConvolution(const Blob& x, const Blob& w, const Blob* b, const Direct& d) {
  const int64_t num = x.shape(0), channels = x.shape(1), height = x.shape(2), width = x.shape(3);
  const int64_t out_h = (height + 2 * d.pad_h - (d.dil_h * (d.kh - 1) + 1)) / d.stride_h + 1;
  const int64_t out_w = (width + 2 * d.pad_w - (d.dil_w * (d.kw - 1) + 1)) / d.stride_w + 1;
  const int64_t in_per_group = channels / d.group, out_per_group = d.num_output / d.group;
  std::vector<float> y;
  for (int64_t n = 0; n < num; ++n) {
    for (int64_t m = 0; m < d.num_output; ++m) {
      const int64_t g = m / out_per_group;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        for (int64_t ow = 0; ow < out_w; ++ow) {
          double sum = b ? b->cpu_data()[m] : 0.0;
          for (int64_t ci = 0; ci < in_per_group; ++ci) {
            for (int64_t i = 0; i < d.kh; ++i) {
              for (int64_t j = 0; j < d.kw; ++j) {
                const int64_t h = oh * d.stride_h - d.pad_h + i * d.dil_h;
                const int64_t v = ow * d.stride_w - d.pad_w + j * d.dil_w;
                if (h < 0 || h >= height || v < 0 || v >= width) continue;
                sum += double(w.data_at(m, ci, i, j)) * x.data_at(n, g * in_per_group + ci, h, v);
              }
            }
          }
          y.push_back(static_cast<float>(sum));
        }
      }
    }
  }
  return y;
}

class ConvolutionLayerTest : public ::testing::Test {
 protected:
  /// Sets up `text` on a bottom of `shape` filled with `values`.
  std::unique_ptr<Layer> SetUpLayer(const std::string& text, const std::vector<int64_t>& shape,
                                    const std::vector<float>& values) {
    bottom_.Reshape(shape);
    FillValues(&bottom_, values);
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_vec_, top_vec_);
    return layer;
  }

  Blob bottom_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&bottom_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(ConvolutionLayerTest, ShapesParamsAndBuffers) {
  bottom_.Reshape({2, 6, 11, 9});
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 4 group: 2 kernel_size: 3 kernel_size: 2 pad: 1 stride: 2 dilation: 2 engine: CAFFE })");
  layer->SetUp(bottom_vec_, top_vec_);
  // h: (11 + 2 - 5) / 2 + 1 = 5 ; w: (9 + 2 - 3) / 2 + 1 = 5
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 4, 5, 5}));
  ASSERT_EQ(layer->blobs().size(), 2u);
  EXPECT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{4, 3, 3, 2}));
  EXPECT_EQ(layer->blobs()[1]->shape(), (std::vector<int64_t>{4}));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].name, "columns");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kScratch);
  EXPECT_EQ(layer->buffers()[0].blob->shape(), (std::vector<int64_t>{6 * 3 * 2, 25}));
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));

  // kernel_h/kernel_w, pad_h/pad_w, stride_h/stride_w; no bias.
  auto hw = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 3 bias_term: false kernel_h: 1 kernel_w: 4 pad_h: 2 pad_w: 0
      stride_h: 3 stride_w: 1 })");
  hw->SetUp(bottom_vec_, top_vec_);
  // h: (11 + 4 - 1) / 3 + 1 = 5 ; w: (9 - 4) / 1 + 1 = 6
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 3, 5, 6}));
  ASSERT_EQ(hw->blobs().size(), 1u);
  EXPECT_EQ(hw->blobs()[0]->shape(), (std::vector<int64_t>{3, 6, 1, 4}));

  // A 1x1 kernel with stride 1 and no pad needs no columns.
  auto one = MakeLayer(R"(type: "Convolution" convolution_param { num_output: 5 kernel_size: 1 })");
  one->SetUp(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 5, 11, 9}));
  EXPECT_EQ(one->buffers()[0].blob->count(), 0);
}

TEST_F(ConvolutionLayerTest, ForwardByHand2x2Kernel) {
  auto layer =
      SetUpLayer(R"(type: "Convolution" convolution_param { num_output: 1 kernel_size: 2 })",
                 {1, 1, 3, 3}, Iota(9));
  FillValues(layer->blobs()[0].get(), {1, 2, -1, 0.5});
  FillValues(layer->blobs()[1].get(), {1});
  layer->Forward(bottom_vec_, top_vec_);
  // [1 2; 4 5]: 1 + 4 - 4 + 2.5 + 1 = 4.5   [2 3; 5 6]: 2 + 6 - 5 + 3 + 1 = 7
  // [4 5; 7 8]: 4 + 10 - 7 + 4 + 1 = 12    [5 6; 8 9]: 5 + 12 - 8 + 4.5 + 1 = 14.5
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{4.5f, 7, 12, 14.5f}));
}

TEST_F(ConvolutionLayerTest, ForwardByHandPadStride) {
  auto layer = SetUpLayer(R"(type: "Convolution" convolution_param {
      num_output: 1 kernel_size: 2 pad: 1 stride: 2 bias_term: false })",
                          {1, 1, 3, 3}, Iota(9));
  FillValues(layer->blobs()[0].get(), {1, 2, -1, 0.5});
  layer->Forward(bottom_vec_, top_vec_);
  // Windows at (-1,-1): only x[0][0]=1 under w[1][1]  -> 0.5
  //            (-1, 1): x[0][1]=2, x[0][2]=3 under w[1][0], w[1][1] -> -2 + 1.5 = -0.5
  //            ( 1,-1): x[1][0]=4, x[2][0]=7 under w[0][1], w[1][1] -> 8 + 3.5 = 11.5
  //            ( 1, 1): [5 6; 8 9] -> 5 + 12 - 8 + 4.5 = 13.5
  EXPECT_EQ(DataOf(top_), (std::vector<float>{0.5f, -0.5f, 11.5f, 13.5f}));
}

TEST_F(ConvolutionLayerTest, ForwardByHandDilation) {
  auto layer = SetUpLayer(R"(type: "Convolution" convolution_param {
      num_output: 1 kernel_size: 2 dilation: 2 bias_term: false })",
                          {1, 1, 4, 4}, Iota(16));
  FillValues(layer->blobs()[0].get(), {1, 2, -1, 0.5});
  layer->Forward(bottom_vec_, top_vec_);
  // Taps (0,0) (0,2) (2,0) (2,2) from each window's corner:
  // [1 3 9 11] -> 1 + 6 - 9 + 5.5 = 3.5 ; [2 4 10 12] -> 2 + 8 - 10 + 6 = 6
  // [5 7 13 15] -> 5 + 14 - 13 + 7.5 = 13.5 ; [6 8 14 16] -> 6 + 16 - 14 + 8 = 16
  EXPECT_EQ(DataOf(top_), (std::vector<float>{3.5f, 6, 13.5f, 16}));
}

TEST_F(ConvolutionLayerTest, ForwardByHandGroups) {
  auto layer = SetUpLayer(R"(type: "Convolution" convolution_param {
      num_output: 2 kernel_size: 2 group: 2 bias_term: false })",
                          {1, 2, 2, 2}, Iota(8));
  ASSERT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{2, 1, 2, 2}));
  FillValues(layer->blobs()[0].get(), {1, 0, 0, 1, 0, 1, 1, 0});
  layer->Forward(bottom_vec_, top_vec_);
  // Output 0 sees channel 0 only: 1 + 4 ; output 1 channel 1 only: 6 + 7.
  EXPECT_EQ(DataOf(top_), (std::vector<float>{5, 13}));
}

TEST_F(ConvolutionLayerTest, ForwardByHand1x1) {
  auto layer =
      SetUpLayer(R"(type: "Convolution" convolution_param { num_output: 2 kernel_size: 1 })",
                 {1, 2, 1, 2}, {1, 2, 3, 4});
  FillValues(layer->blobs()[0].get(), {1, 1, 2, -1});
  FillValues(layer->blobs()[1].get(), {0.5, 0});
  layer->Forward(bottom_vec_, top_vec_);
  // out 0 = ch0 + ch1 + 0.5 ; out 1 = 2 ch0 - ch1
  EXPECT_EQ(DataOf(top_), (std::vector<float>{4.5f, 6.5f, -1, 0}));
}

TEST_F(ConvolutionLayerTest, ForwardMatchesDirectConvolution) {
  struct Case {
    std::vector<int64_t> shape;
    Direct d;
  };
  const std::vector<Case> cases = {
      {{2, 3, 7, 6}, {4, 1, 3, 3, 0, 0, 1, 1, 1, 1}},
      {{1, 4, 9, 8}, {6, 2, 3, 2, 1, 0, 2, 1, 1, 2}},
      {{2, 5, 6, 7}, {5, 5, 3, 3, 1, 1, 1, 1, 1, 1}},  // depthwise
      {{1, 6, 13, 5}, {9, 3, 2, 3, 2, 1, 3, 2, 2, 1}},
      {{3, 4, 5, 5}, {2, 1, 1, 1, 0, 0, 1, 1, 1, 1}},  // 1x1
      {{1, 2, 8, 8}, {3, 1, 1, 1, 1, 0, 2, 1, 1, 1}},  // 1x1 with pad and stride
      {{1, 1, 1, 13}, {2, 1, 1, 5, 0, 2, 1, 4, 1, 1}},
  };
  for (const Case& c : cases) {
    const Direct& d = c.d;
    const std::string text =
        StrCat("type: 'Convolution' convolution_param { num_output: ", d.num_output,
               " group: ", d.group, " kernel_h: ", d.kh, " kernel_w: ", d.kw, " pad_h: ", d.pad_h,
               " pad_w: ", d.pad_w, " stride_h: ", d.stride_h, " stride_w: ", d.stride_w,
               " dilation: ", d.dil_h, " dilation: ", d.dil_w,
               " weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' } }");
    bottom_.Reshape(c.shape);
    FillGaussian(&bottom_, 31);
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    const std::vector<float> expected =
        DirectConvolution(bottom_, *layer->blobs()[0], layer->blobs()[1].get(), d);
    ASSERT_EQ(static_cast<int64_t>(expected.size()), top_.count()) << text;
    for (int64_t i = 0; i < top_.count(); ++i) {
      EXPECT_NEAR(top_.cpu_data()[i], expected[i], 1e-4) << text << " element " << i;
    }
  }
}

TEST_F(ConvolutionLayerTest, SeveralBottomsShareTheFilters) {
  Blob second({2, 3, 5, 4}), top2;
  bottom_.Reshape({2, 3, 5, 4});
  FillGaussian(&bottom_, 3);
  FillGaussian(&second, 4);
  std::vector<Blob*> bottoms{&bottom_, &second}, tops{&top_, &top2};
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 2 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  layer->SetUp(bottoms, tops);
  layer->Forward(bottoms, tops);
  const Direct d{2, 1, 3, 3, 1, 1, 1, 1, 1, 1};
  const std::vector<float> first =
      DirectConvolution(bottom_, *layer->blobs()[0], layer->blobs()[1].get(), d);
  const std::vector<float> other =
      DirectConvolution(second, *layer->blobs()[0], layer->blobs()[1].get(), d);
  EXPECT_EQ(top2.shape(), top_.shape());
  for (int64_t i = 0; i < top_.count(); ++i) {
    EXPECT_NEAR(top_.cpu_data()[i], first[i], 1e-4);
    EXPECT_NEAR(top2.cpu_data()[i], other[i], 1e-4);
  }
}

TEST_F(ConvolutionLayerTest, GradientBasicOddShape) {
  bottom_.Reshape({2, 3, 6, 5});
  FillGaussian(&bottom_, 5);
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 4 kernel_size: 3 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(ConvolutionLayerTest, GradientGroup2) {
  bottom_.Reshape({2, 4, 5, 5});
  FillGaussian(&bottom_, 6);
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 6 group: 2 kernel_size: 3 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(ConvolutionLayerTest, GradientDilation2) {
  bottom_.Reshape({1, 3, 7, 7});
  FillGaussian(&bottom_, 7);
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 2 kernel_size: 3 dilation: 2 pad: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(ConvolutionLayerTest, GradientStride2Pad1) {
  bottom_.Reshape({2, 3, 7, 6});
  FillGaussian(&bottom_, 8);
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 3 kernel_size: 3 stride: 2 pad: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(ConvolutionLayerTest, GradientDepthwise) {
  bottom_.Reshape({2, 3, 5, 6});
  FillGaussian(&bottom_, 9);
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 6 group: 3 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(ConvolutionLayerTest, Gradient1x1) {
  bottom_.Reshape({2, 5, 3, 4});
  FillGaussian(&bottom_, 10);
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 3 kernel_size: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(ConvolutionLayerTest, GradientRectangularSettingsAndSingleRow) {
  bottom_.Reshape({1, 2, 1, 13});
  FillGaussian(&bottom_, 12);
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 3 kernel_h: 1 kernel_w: 4 pad_h: 1 pad_w: 2 stride_h: 2 stride_w: 3
      weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(ConvolutionLayerTest, GradientSeveralBottoms) {
  Blob second({1, 2, 4, 5}), top2;
  bottom_.Reshape({1, 2, 4, 5});
  FillGaussian(&bottom_, 13);
  FillGaussian(&second, 14);
  std::vector<Blob*> bottoms{&bottom_, &second}, tops{&top_, &top2};
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param {
      num_output: 2 kernel_size: 2 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottoms, tops);
}

TEST_F(ConvolutionLayerTest, BackwardIgnoresTopDataAndAccumulatesParams) {
  for (const char* text :
       {R"(type: "Convolution" convolution_param { num_output: 4 kernel_size: 3 pad: 1 group: 2
           weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })",
        R"(type: "Convolution" convolution_param { num_output: 3 kernel_size: 1
           weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })"}) {
    bottom_.Reshape({2, 4, 5, 3});
    FillGaussian(&bottom_, 15);
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    FillGaussian(&top_, 16);
    Copy(top_.count(), top_.cpu_data(), top_.mutable_cpu_diff());
    Set(top_.count(), kNaN, top_.mutable_cpu_data());  // Backward must not read it
    for (auto& param : layer->blobs()) Set(param->count(), 0.0f, param->mutable_cpu_diff());
    Set(bottom_.count(), kNaN, bottom_.mutable_cpu_diff());  // written, not accumulated
    layer->Backward(top_vec_, {true}, bottom_vec_);
    const std::vector<float> dx = DiffOf(bottom_);
    const std::vector<float> dw = DiffOf(*layer->blobs()[0]);
    const std::vector<float> db = DiffOf(*layer->blobs()[1]);
    for (float v : dx) ASSERT_TRUE(std::isfinite(v)) << text;
    for (float v : dw) ASSERT_TRUE(std::isfinite(v)) << text;
    // db is the sum of dy over images and positions.
    const int64_t spatial = top_.count(2);
    const float* dy = top_.cpu_diff();
    for (int64_t m = 0; m < top_.shape(1); ++m) {
      double sum = 0;
      for (int64_t n = 0; n < top_.shape(0); ++n) {
        for (int64_t s = 0; s < spatial; ++s) sum += dy[(n * top_.shape(1) + m) * spatial + s];
      }
      EXPECT_NEAR(db[m], sum, 1e-4) << text;
    }
    // A second Backward adds to the param gradients and rewrites dx.
    layer->Backward(top_vec_, {true}, bottom_vec_);
    for (size_t i = 0; i < dx.size(); ++i) EXPECT_FLOAT_EQ(bottom_.cpu_diff()[i], dx[i]);
    for (size_t i = 0; i < dw.size(); ++i) {
      EXPECT_NEAR(layer->blobs()[0]->cpu_diff()[i], 2 * dw[i], 1e-5 * (1 + std::fabs(dw[i])));
    }
  }
}

TEST_F(ConvolutionLayerTest, PropagateDownFlagsAreRespected) {
  bottom_.Reshape({1, 2, 4, 4});
  FillGaussian(&bottom_, 17);
  auto layer = MakeLayer(R"(type: "Convolution" convolution_param { num_output: 2 kernel_size: 3
      weight_filler { type: "gaussian" } })");
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  Set(top_.count(), 1.0f, top_.mutable_cpu_diff());
  Set(bottom_.count(), 42.0f, bottom_.mutable_cpu_diff());
  for (auto& param : layer->blobs()) Set(param->count(), 0.0f, param->mutable_cpu_diff());
  layer->set_param_propagate_down(0, false);
  layer->Backward(top_vec_, {false}, bottom_vec_);
  for (float v : DiffOf(bottom_)) EXPECT_EQ(v, 42.0f);
  for (float v : DiffOf(*layer->blobs()[0])) EXPECT_EQ(v, 0.0f);
  // The bias still learns: each of the 2 x 2 outputs contributes 1.
  EXPECT_EQ(DiffOf(*layer->blobs()[1]), (std::vector<float>{4, 4}));
}

TEST_F(ConvolutionLayerTest, PreloadedParamsAreKept) {
  LayerParameter param = ParseText<LayerParameter>(
      R"(name: "conv" type: "Convolution" convolution_param { num_output: 1 kernel_size: 2 })");
  Blob w({1, 1, 2, 2}), b({1});
  FillValues(&w, {1, 2, -1, 0.5});
  FillValues(&b, {1});
  w.ToProto(param.add_blobs());
  b.ToProto(param.add_blobs());
  auto layer = LayerRegistry::Create(param);
  bottom_.Reshape({1, 1, 3, 3});
  FillValues(&bottom_, Iota(9));
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(DataOf(top_), (std::vector<float>{4.5f, 7, 12, 14.5f}));
  EXPECT_TRUE(layer->param_propagate_down(0));
  EXPECT_TRUE(layer->param_propagate_down(1));
}

TEST_F(ConvolutionLayerTest, BadSettingsNameTheLayer) {
  bottom_.Reshape({1, 3, 4, 4});
  auto setup = [&](const std::string& settings) {
    MakeLayer("name: 'conv' type: 'Convolution' convolution_param { " + settings + " }")
        ->SetUp(bottom_vec_, top_vec_);
  };
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 axis: 2"); },
                        {"conv", "axis 2", "axis 1"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 group: 2"); },
                        {"conv", "group 2", "3 input channels", "1 3 4 4"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 group: 3"); },
                        {"conv", "group 3", "num_output 2"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 group: 0"); },
                        {"conv", "group 0"});
  ExpectErrorContaining([&] { setup("kernel_size: 3"); }, {"conv", "num_output > 0"});
  ExpectErrorContaining([&] { setup("num_output: 2"); },
                        {"conv", "needs kernel_size or kernel_h and kernel_w"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 kernel_h: 3 kernel_w: 3"); },
                        {"conv", "both kernel_size and kernel_h/kernel_w"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 1 pad: 1 pad_h: 1"); },
                        {"conv", "both pad and pad_h"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 1 stride: 1 stride_w: 2"); },
                        {"conv", "both stride and stride_h"});
  ExpectErrorContaining(
      [&] { setup("num_output: 2 kernel_size: 1 kernel_size: 2 kernel_size: 3"); },
      {"conv", "3 values of kernel_size", "2 (h, w)"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_h: 3"); },
                        {"conv", "non-zero kernel", "3 x 0"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 stride: 0"); },
                        {"conv", "non-zero stride"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 dilation: 1 dilation: 0"); },
                        {"conv", "non-zero dilation", "1 x 0"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 dilation: 2"); },
                        {"conv", "dilated kernel (5 x 5)", "1 3 4 4", "padded by 0 x 0"});
  bottom_.Reshape({3, 4, 4});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3"); }, {"conv", "4-D", "3 4 4"});
}

TEST_F(ConvolutionLayerTest, ShapeMismatchesNameTheShapes) {
  bottom_.Reshape({1, 3, 4, 4});
  auto layer = MakeLayer(R"(name: "conv" type: "Convolution"
      convolution_param { num_output: 2 kernel_size: 3 })");
  layer->SetUp(bottom_vec_, top_vec_);
  bottom_.Reshape({1, 5, 4, 4});
  ExpectErrorContaining([&] { layer->Reshape(bottom_vec_, top_vec_); },
                        {"conv", "set up for 3 input channels", "1 5 4 4"});

  Blob second({1, 3, 5, 4}), top2;
  bottom_.Reshape({1, 3, 4, 4});
  std::vector<Blob*> bottoms{&bottom_, &second}, tops{&top_, &top2};
  auto two = MakeLayer(R"(name: "conv2" type: "Convolution"
      convolution_param { num_output: 2 kernel_size: 3 })");
  ExpectErrorContaining([&] { two->SetUp(bottoms, tops); },
                        {"conv2", "bottoms of one shape", "1 3 4 4", "bottom 1 is 1 3 5 4"});
}

TEST_F(ConvolutionLayerTest, PreloadedParamsOfTheWrongShape) {
  bottom_.Reshape({1, 3, 4, 4});
  LayerParameter param = ParseText<LayerParameter>(
      R"(name: "conv" type: "Convolution" convolution_param { num_output: 2 kernel_size: 3 })");
  Blob w({2, 3, 2, 2}), b({2}), wrong_b({3});
  w.ToProto(param.add_blobs());
  ExpectErrorContaining([&] { LayerRegistry::Create(param)->SetUp(bottom_vec_, top_vec_); },
                        {"conv", "1 preloaded param blobs", "expected 2"});
  b.ToProto(param.add_blobs());
  ExpectErrorContaining([&] { LayerRegistry::Create(param)->SetUp(bottom_vec_, top_vec_); },
                        {"conv", "weights of shape 2 3 3 3", "got 2 3 2 2"});
  Blob right_w({2, 3, 3, 3});
  right_w.ToProto(param.mutable_blobs(0));
  wrong_b.ToProto(param.mutable_blobs(1));
  ExpectErrorContaining([&] { LayerRegistry::Create(param)->SetUp(bottom_vec_, top_vec_); },
                        {"conv", "bias of shape 2", "got 3"});
}

// Convolution, pooling and LRN in one planned net: if any of them read in
// Backward what it declares it does not, the planner would hand those bytes
// to another tensor and the planned net would drift from the unplanned one.
TEST(ConvolutionNetTest, PlannedNetTrainsBitIdenticallyToUnplanned) {
  const char* text = R"(
    layer { name: "data" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 2 dim: 3 dim: 9 dim: 9 }
                               data_filler { type: "gaussian" } } }
    layer { name: "conv1" type: "Convolution" bottom: "x" top: "c1"
            convolution_param { num_output: 4 kernel_size: 3 pad: 1
                                weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "relu1" type: "ReLU" bottom: "c1" top: "c1" }
    layer { name: "pool1" type: "Pooling" bottom: "c1" top: "p1"
            pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
    layer { name: "norm1" type: "LRN" bottom: "p1" top: "n1"
            lrn_param { local_size: 3 alpha: 0.5 } }
    layer { name: "conv2" type: "Convolution" bottom: "n1" top: "c2"
            convolution_param { num_output: 6 group: 2 kernel_size: 2 dilation: 2
                                weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "norm2" type: "LRN" bottom: "c2" top: "n2"
            lrn_param { norm_region: WITHIN_CHANNEL local_size: 3 alpha: 0.5 } }
    layer { name: "conv3" type: "Convolution" bottom: "n2" top: "c3"
            convolution_param { num_output: 5 kernel_size: 1
                                weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "pool2" type: "Pooling" bottom: "c3" top: "p2"
            pooling_param { pool: AVE kernel_size: 2 stride: 1 pad: 1 } }
    layer { name: "head" type: "InnerProduct" bottom: "p2" top: "out" loss_weight: 1
            inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 } } }
  )";
  ExpectPlannedTrainingMatchesUnplanned(text);
}

}  // namespace
}  // namespace demi
