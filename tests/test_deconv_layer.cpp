#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "demi/layers/deconv_layer.hpp"
#include "demi/net.hpp"
#include "gradient_checker.hpp"
#include "net_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Settings of a direct (loop-by-loop) deconvolution, the test's reference.
struct Direct {
  int64_t num_output, group, kh, kw, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
};

/// Scatters every bottom pixel times its kernel into the top:
/// y[n, g M + m, ih s - p + i d, iw s - p + j d] += W[c, m, i, j] x[n, c, ih, iw],
/// dropping what lands in the padding; then adds the bias.
std::vector<float> DirectDeconvolution(const Blob& x, const Blob& w, const Blob* b,
                                       const Direct& d) {
  const int64_t num = x.shape(0), channels = x.shape(1), height = x.shape(2), width = x.shape(3);
  const int64_t out_h = d.stride_h * (height - 1) + d.dil_h * (d.kh - 1) + 1 - 2 * d.pad_h;
  const int64_t out_w = d.stride_w * (width - 1) + d.dil_w * (d.kw - 1) + 1 - 2 * d.pad_w;
  const int64_t in_per_group = channels / d.group, out_per_group = d.num_output / d.group;
  std::vector<double> y(static_cast<size_t>(num * d.num_output * out_h * out_w), 0.0);
  for (int64_t n = 0; n < num; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t g = c / in_per_group;
      for (int64_t ih = 0; ih < height; ++ih) {
        for (int64_t iw = 0; iw < width; ++iw) {
          for (int64_t m = 0; m < out_per_group; ++m) {
            for (int64_t i = 0; i < d.kh; ++i) {
              for (int64_t j = 0; j < d.kw; ++j) {
                const int64_t oh = ih * d.stride_h - d.pad_h + i * d.dil_h;
                const int64_t ow = iw * d.stride_w - d.pad_w + j * d.dil_w;
                if (oh < 0 || oh >= out_h || ow < 0 || ow >= out_w) continue;
                const int64_t top_c = g * out_per_group + m;
                y[((n * d.num_output + top_c) * out_h + oh) * out_w + ow] +=
                    double(w.data_at(c, m, i, j)) * x.data_at(n, c, ih, iw);
              }
            }
          }
        }
      }
    }
  }
  std::vector<float> result;
  for (size_t k = 0; k < y.size(); ++k) {
    const int64_t top_c = static_cast<int64_t>(k) / (out_h * out_w) % d.num_output;
    result.push_back(static_cast<float>(y[k] + (b ? b->cpu_data()[top_c] : 0.0)));
  }
  return result;
}

std::string DeconvText(const Direct& d) {
  return StrCat("type: 'Deconvolution' convolution_param { num_output: ", d.num_output,
                " group: ", d.group, " kernel_h: ", d.kh, " kernel_w: ", d.kw, " pad_h: ", d.pad_h,
                " pad_w: ", d.pad_w, " stride_h: ", d.stride_h, " stride_w: ", d.stride_w,
                " dilation: ", d.dil_h, " dilation: ", d.dil_w,
                " weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' } }");
}

class DeconvolutionLayerTest : public ::testing::Test {
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

TEST_F(DeconvolutionLayerTest, ShapesParamsAndBuffers) {
  bottom_.Reshape({2, 6, 5, 4});
  auto layer = MakeLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 4 group: 2 kernel_size: 3 kernel_size: 2 pad: 1 stride: 2 dilation: 2 engine: CAFFE })");
  layer->SetUp(bottom_vec_, top_vec_);
  // h: 2 (5 - 1) + 2 (3 - 1) + 1 - 2 = 11 ; w: 2 (4 - 1) + 2 (2 - 1) + 1 - 2 = 7
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 4, 11, 7}));
  ASSERT_EQ(layer->blobs().size(), 2u);
  // Caffe's layout: bottom channels x num_output / group x kh x kw.
  EXPECT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{6, 2, 3, 2}));
  EXPECT_EQ(layer->blobs()[1]->shape(), (std::vector<int64_t>{4}));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].name, "columns");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kScratch);
  // (num_output * kh * kw) x bottom positions.
  EXPECT_EQ(layer->buffers()[0].blob->shape(), (std::vector<int64_t>{4 * 3 * 2, 20}));
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));

  // A 1x1 kernel with stride 1 and no pad needs no columns.
  auto one =
      MakeLayer(R"(type: "Deconvolution" convolution_param { num_output: 3 kernel_size: 1 })");
  one->SetUp(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 3, 5, 4}));
  EXPECT_EQ(one->blobs()[0]->shape(), (std::vector<int64_t>{6, 3, 1, 1}));
  EXPECT_EQ(one->buffers()[0].blob->count(), 0);
}

TEST_F(DeconvolutionLayerTest, ForwardByHandStride2TilesTheKernel) {
  auto layer = SetUpLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 1 kernel_size: 2 stride: 2 })",
                          {1, 1, 2, 2}, {1, 2, 3, 4});
  FillValues(layer->blobs()[0].get(), {1, -1, 2, 0.5});
  FillValues(layer->blobs()[1].get(), {1});
  layer->Forward(bottom_vec_, top_vec_);
  // Each input pixel v writes v W + 1 into its own 2x2 block:
  // 1: [2 0; 3 1.5]  2: [3 -1; 5 2]  3: [4 -2; 7 2.5]  4: [5 -3; 9 3]
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{2, 0, 3, -1,    //
                                              3, 1.5f, 5, 2,  //
                                              4, -2, 5, -3,   //
                                              7, 2.5f, 9, 3}));
}

TEST_F(DeconvolutionLayerTest, ForwardByHandOverlapAndPad) {
  auto layer = SetUpLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 1 kernel_size: 2 bias_term: false })",
                          {1, 1, 2, 2}, {1, 2, 3, 4});
  FillValues(layer->blobs()[0].get(), {1, -1, 2, 0.5});
  layer->Forward(bottom_vec_, top_vec_);
  // Stride 1: overlapping windows add up (x = [1 2; 3 4], W = [1 -1; 2 0.5]).
  // (0,0) 1 ; (0,1) -1 + 2 = 1 ; (0,2) -2
  // (1,0) 2 + 3 = 5 ; (1,1) 0.5 + 4 - 3 + 4 = 5.5 ; (1,2) 1 - 4 = -3
  // (2,0) 6 ; (2,1) 1.5 + 8 = 9.5 ; (2,2) 2
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{1, 1, -2, 5, 5.5f, -3, 6, 9.5f, 2}));

  // Pad 1 crops one position from each border: 1 (2 - 1) + 2 - 2 = 1.
  auto padded = SetUpLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 1 kernel_size: 2 pad: 1 bias_term: false })",
                           {1, 1, 2, 2}, {1, 2, 3, 4});
  FillValues(padded->blobs()[0].get(), {1, -1, 2, 0.5});
  padded->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{5.5f}));
}

TEST_F(DeconvolutionLayerTest, ForwardByHandGroups) {
  auto layer = SetUpLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 4 group: 2 kernel_size: 1 bias_term: false })",
                          {1, 2, 1, 2}, {1, 2, 3, 4});
  ASSERT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{2, 2, 1, 1}));
  FillValues(layer->blobs()[0].get(), {1, -1, 2, 0.5});
  layer->Forward(bottom_vec_, top_vec_);
  // Tops 0, 1 see bottom channel 0 ([1 2]) times 1, -1; tops 2, 3 channel 1 ([3 4]) times 2, 0.5.
  EXPECT_EQ(DataOf(top_), (std::vector<float>{1, 2, -1, -2, 6, 8, 1.5f, 2}));
}

TEST_F(DeconvolutionLayerTest, BilinearFillerUpsamplesByTwo) {
  // Factor 2: kernel 4, stride 2, pad 1, one group per channel. The bilinear
  // kernel is the outer product of [0.25 0.75 0.75 0.25] with itself.
  auto layer = SetUpLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 2 group: 2 kernel_size: 4 stride: 2 pad: 1 bias_term: false
      weight_filler { type: "bilinear" } })",
                          {1, 2, 2, 2}, {1, 2, 3, 4, 4, 3, 2, 1});
  ASSERT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{2, 1, 4, 4}));
  const std::vector<float> kernel{0.0625f, 0.1875f, 0.1875f, 0.0625f,  //
                                  0.1875f, 0.5625f, 0.5625f, 0.1875f,  //
                                  0.1875f, 0.5625f, 0.5625f, 0.1875f,  //
                                  0.0625f, 0.1875f, 0.1875f, 0.0625f};
  for (int64_t i = 0; i < 32; ++i) EXPECT_EQ(layer->blobs()[0]->cpu_data()[i], kernel[i % 16]);
  layer->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 2, 4, 4}));
  // Per axis, output o mixes inputs a, b as [.75a, .75a + .25b, .25a + .75b, .75b];
  // for [1 2; 3 4] the rows are R x with R = that 4 x 2 matrix, then the same on columns:
  // R x = [.75 1.5; 1.5 2.5; 2.5 3.5; 2.25 3].
  const std::vector<float> up{0.5625f, 0.9375f, 1.3125f, 1.125f,  //
                              1.125f,  1.75f,   2.25f,   1.875f,  //
                              1.875f,  2.75f,   3.25f,   2.625f,  //
                              1.6875f, 2.4375f, 2.8125f, 2.25f};
  // Channel 1 is channel 0 turned by 180 degrees, and so is its upsampling.
  for (int64_t i = 0; i < 16; ++i) {
    EXPECT_EQ(top_.cpu_data()[i], up[i]) << i;
    EXPECT_EQ(top_.cpu_data()[16 + i], up[15 - i]) << i;
  }
}

TEST_F(DeconvolutionLayerTest, ForwardMatchesDirectDeconvolution) {
  struct Case {
    std::vector<int64_t> shape;
    Direct d;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4, 5}, {4, 1, 3, 3, 0, 0, 1, 1, 1, 1}},
      {{1, 4, 5, 3}, {6, 2, 3, 2, 1, 0, 2, 1, 1, 2}},
      {{2, 5, 3, 4}, {5, 5, 3, 3, 1, 1, 2, 2, 1, 1}},  // depthwise
      {{1, 6, 7, 3}, {9, 3, 2, 3, 2, 1, 3, 2, 2, 1}},
      {{3, 4, 5, 5}, {2, 1, 1, 1, 0, 0, 1, 1, 1, 1}},  // 1x1
      {{1, 2, 4, 4}, {3, 1, 1, 1, 1, 0, 2, 1, 1, 1}},  // 1x1 with pad and stride
      {{1, 1, 1, 13}, {2, 1, 1, 5, 0, 2, 1, 4, 1, 1}},
  };
  for (const Case& c : cases) {
    const std::string text = DeconvText(c.d);
    bottom_.Reshape(c.shape);
    FillGaussian(&bottom_, 31);
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    const std::vector<float> expected =
        DirectDeconvolution(bottom_, *layer->blobs()[0], layer->blobs()[1].get(), c.d);
    ASSERT_EQ(static_cast<int64_t>(expected.size()), top_.count()) << text;
    for (int64_t i = 0; i < top_.count(); ++i) {
      EXPECT_NEAR(top_.cpu_data()[i], expected[i], 1e-4) << text << " element " << i;
    }
  }
}

// With the same weights, Deconvolution is the adjoint of Convolution:
// <conv(x), y> = <x, deconv(y)> for every x and y.
TEST_F(DeconvolutionLayerTest, IsTheAdjointOfConvolution) {
  const std::string settings = R"(group: 2 kernel_size: 3 stride: 2 pad: 1 bias_term: false
      weight_filler { type: "gaussian" } })";
  Blob x({2, 4, 7, 9}), conv_x, y({2, 6, 4, 5}), deconv_y;
  FillGaussian(&x, 41);
  FillGaussian(&y, 42);
  auto conv = MakeLayer("type: 'Convolution' convolution_param { num_output: 6 " + settings);
  std::vector<Blob*> conv_bottom{&x}, conv_top{&conv_x};
  conv->SetUp(conv_bottom, conv_top);
  conv->Forward(conv_bottom, conv_top);
  ASSERT_EQ(conv_x.shape(), y.shape());

  auto deconv = MakeLayer("type: 'Deconvolution' convolution_param { num_output: 4 " + settings);
  std::vector<Blob*> deconv_bottom{&y}, deconv_top{&deconv_y};
  deconv->SetUp(deconv_bottom, deconv_top);
  ASSERT_EQ(deconv->blobs()[0]->shape(), conv->blobs()[0]->shape());
  deconv->blobs()[0]->CopyFrom(*conv->blobs()[0]);
  deconv->Forward(deconv_bottom, deconv_top);
  ASSERT_EQ(deconv_y.shape(), x.shape());
  const double lhs = Dot(y.count(), conv_x.cpu_data(), y.cpu_data());
  const double rhs = Dot(x.count(), x.cpu_data(), deconv_y.cpu_data());
  EXPECT_NEAR(lhs, rhs, 1e-3 * (1 + std::fabs(lhs)));
}

TEST_F(DeconvolutionLayerTest, GradientBasicOddShape) {
  bottom_.Reshape({2, 3, 3, 5});
  FillGaussian(&bottom_, 5);
  auto layer = MakeLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 4 kernel_size: 3 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(DeconvolutionLayerTest, GradientStride2Pad1) {
  bottom_.Reshape({2, 3, 4, 3});
  FillGaussian(&bottom_, 6);
  auto layer = MakeLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 3 kernel_size: 3 stride: 2 pad: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(DeconvolutionLayerTest, GradientGroup2Dilation2) {
  bottom_.Reshape({1, 4, 3, 4});
  FillGaussian(&bottom_, 7);
  auto layer = MakeLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 6 group: 2 kernel_size: 3 dilation: 2 pad: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(DeconvolutionLayerTest, GradientBilinearUpsampling) {
  bottom_.Reshape({2, 3, 3, 2});
  FillGaussian(&bottom_, 8);
  auto layer = MakeLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 3 group: 3 kernel_size: 4 stride: 2 pad: 1 bias_term: false
      weight_filler { type: "bilinear" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(DeconvolutionLayerTest, Gradient1x1AndRectangularSingleRow) {
  bottom_.Reshape({2, 5, 3, 4});
  FillGaussian(&bottom_, 9);
  auto one = MakeLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 3 kernel_size: 1 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(one.get(), bottom_vec_, top_vec_);

  bottom_.Reshape({1, 2, 1, 13});
  FillGaussian(&bottom_, 10);
  auto row = MakeLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 3 kernel_h: 1 kernel_w: 4 pad_h: 0 pad_w: 2 stride_h: 2 stride_w: 3
      weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })");
  checker.CheckGradient(row.get(), bottom_vec_, top_vec_);
}

TEST_F(DeconvolutionLayerTest, GradientSeveralBottoms) {
  Blob second({1, 2, 3, 2}), top2;
  bottom_.Reshape({1, 2, 3, 2});
  FillGaussian(&bottom_, 13);
  FillGaussian(&second, 14);
  std::vector<Blob*> bottoms{&bottom_, &second}, tops{&top_, &top2};
  auto layer = MakeLayer(R"(type: "Deconvolution" convolution_param {
      num_output: 2 kernel_size: 2 stride: 2 weight_filler { type: "gaussian" }
      bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottoms, tops);
}

TEST_F(DeconvolutionLayerTest, BackwardIgnoresTopDataAndAccumulatesParams) {
  for (const char* text :
       {R"(type: "Deconvolution" convolution_param { num_output: 4 kernel_size: 3 stride: 2
           group: 2 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })",
        R"(type: "Deconvolution" convolution_param { num_output: 3 kernel_size: 1
           weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })"}) {
    bottom_.Reshape({2, 4, 3, 5});
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
      EXPECT_NEAR(layer->blobs()[1]->cpu_diff()[m], sum, 1e-4) << text;
    }
    // A second Backward adds to the param gradients and rewrites dx.
    layer->Backward(top_vec_, {true}, bottom_vec_);
    for (size_t i = 0; i < dx.size(); ++i) EXPECT_FLOAT_EQ(bottom_.cpu_diff()[i], dx[i]);
    for (size_t i = 0; i < dw.size(); ++i) {
      EXPECT_NEAR(layer->blobs()[0]->cpu_diff()[i], 2 * dw[i], 1e-5 * (1 + std::fabs(dw[i])));
    }
  }
}

TEST_F(DeconvolutionLayerTest, PropagateDownFlagsAreRespected) {
  bottom_.Reshape({1, 2, 3, 3});
  FillGaussian(&bottom_, 17);
  auto layer = MakeLayer(R"(type: "Deconvolution" convolution_param { num_output: 2
      kernel_size: 2 stride: 2 weight_filler { type: "gaussian" } })");
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  Set(top_.count(), 1.0f, top_.mutable_cpu_diff());
  Set(bottom_.count(), 42.0f, bottom_.mutable_cpu_diff());
  for (auto& param : layer->blobs()) Set(param->count(), 0.0f, param->mutable_cpu_diff());
  layer->set_param_propagate_down(0, false);
  layer->Backward(top_vec_, {false}, bottom_vec_);
  for (float v : DiffOf(bottom_)) EXPECT_EQ(v, 42.0f);
  for (float v : DiffOf(*layer->blobs()[0])) EXPECT_EQ(v, 0.0f);
  // The bias still learns: each of the 6 x 6 top positions contributes 1.
  EXPECT_EQ(DiffOf(*layer->blobs()[1]), (std::vector<float>{36, 36}));
}

TEST_F(DeconvolutionLayerTest, BadSettingsNameTheLayer) {
  bottom_.Reshape({1, 3, 2, 2});
  auto setup = [&](const std::string& settings) {
    MakeLayer("name: 'up' type: 'Deconvolution' convolution_param { " + settings + " }")
        ->SetUp(bottom_vec_, top_vec_);
  };
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 group: 3"); },
                        {"Deconvolution layer 'up'", "group 3", "num_output 2"});
  ExpectErrorContaining([&] { setup("num_output: 3 kernel_size: 3 group: 2"); },
                        {"Deconvolution layer 'up'", "group 2", "3 input channels", "1 3 2 2"});
  ExpectErrorContaining([&] { setup("kernel_size: 3"); }, {"up", "num_output > 0"});
  ExpectErrorContaining([&] { setup("num_output: 2"); },
                        {"Deconvolution layer 'up'", "needs kernel_size or kernel_h"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 stride: 0"); },
                        {"up", "non-zero stride"});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3 axis: 2"); },
                        {"up", "axis 2", "axis 1"});
  // 1 (2 - 1) + 2 - 2 * 2 = -1 rows.
  ExpectErrorContaining(
      [&] { setup("num_output: 2 kernel_size: 2 pad: 2"); },
      {"Deconvolution layer 'up'", "1 3 2 2", "pad 2 x 2", "empty top (-1 x -1)"});
  bottom_.Reshape({3, 2, 2});
  ExpectErrorContaining([&] { setup("num_output: 2 kernel_size: 3"); }, {"up", "4-D", "3 2 2"});
}

TEST_F(DeconvolutionLayerTest, ShapeMismatchesAndPreloadedParams) {
  bottom_.Reshape({1, 3, 4, 4});
  auto layer = MakeLayer(R"(name: "up" type: "Deconvolution"
      convolution_param { num_output: 2 kernel_size: 3 })");
  layer->SetUp(bottom_vec_, top_vec_);
  bottom_.Reshape({1, 5, 4, 4});
  ExpectErrorContaining([&] { layer->Reshape(bottom_vec_, top_vec_); },
                        {"up", "set up for 3 input channels", "1 5 4 4"});

  bottom_.Reshape({1, 3, 4, 4});
  LayerParameter param = ParseText<LayerParameter>(
      R"(name: "up" type: "Deconvolution" convolution_param { num_output: 2 kernel_size: 3 })");
  Blob wrong_w({2, 3, 3, 3}), b({2});
  wrong_w.ToProto(param.add_blobs());
  b.ToProto(param.add_blobs());
  ExpectErrorContaining([&] { LayerRegistry::Create(param)->SetUp(bottom_vec_, top_vec_); },
                        {"up", "weights of shape 3 2 3 3", "got 2 3 3 3"});
}

// Deconvolution among planned layers: if it read in Backward what it declares
// it does not, the planned net would drift from the unplanned one.
TEST(DeconvolutionNetTest, PlannedNetTrainsBitIdenticallyToUnplanned) {
  const char* text = R"(
    layer { name: "data" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 2 dim: 3 dim: 5 dim: 4 }
                               data_filler { type: "gaussian" } } }
    layer { name: "conv1" type: "Convolution" bottom: "x" top: "c1"
            convolution_param { num_output: 4 kernel_size: 3 stride: 2 pad: 1
                                weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "up1" type: "Deconvolution" bottom: "c1" top: "u1"
            convolution_param { num_output: 4 group: 2 kernel_size: 4 stride: 2 pad: 1
                                weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "relu1" type: "ReLU" bottom: "u1" top: "u1" }
    layer { name: "up2" type: "Deconvolution" bottom: "u1" top: "u2"
            convolution_param { num_output: 2 kernel_size: 1
                                weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "head" type: "InnerProduct" bottom: "u2" top: "out" loss_weight: 1
            inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 } } }
  )";
  ExpectPlannedTrainingMatchesUnplanned(text);
}

}  // namespace
}  // namespace demi
