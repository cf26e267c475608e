// The DNNL engine of each layer that has one against the CAFFE engine on
// the same inputs (forward, bottom and param gradients), on odd shapes, and
// its gradients against finite differences.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "demi/util/dnnl.hpp"
#include "layer_compare_util.hpp"

namespace demi {
namespace {

std::unique_ptr<Layer> MakeLayerWithEngine(const std::string& text, EngineKind engine) {
  std::unique_ptr<Layer> layer = MakeLayer(text);
  Context context;
  context.engine = engine;
  layer->set_context(context);
  return layer;
}

LayerCase NewCase(const std::string& layer, std::vector<std::vector<int64_t>> bottoms) {
  LayerCase c;
  c.layer = layer;
  c.bottoms = std::move(bottoms);
  return c;
}

/// The case's layer with the net-wide engine DNNL agrees with CAFFE, and
/// really ran oneDNN.
void ExpectDnnlMatchesCaffe(const LayerCase& c) {
  auto probe = MakeLayerWithEngine(c.layer, EngineKind::kDnnl);
  std::vector<std::unique_ptr<Blob>> bottoms;
  std::vector<Blob*> bottom;
  for (const auto& shape : c.bottoms) {
    bottoms.push_back(std::make_unique<Blob>(shape));
    bottom.push_back(bottoms.back().get());
  }
  const size_t num_tops = probe->EqualNumBottomTopBlobs() ? bottom.size() : 1;
  std::vector<Blob> tops(num_tops);
  std::vector<Blob*> top;
  for (Blob& blob : tops) top.push_back(&blob);
  probe->SetUp(bottom, top);
  ASSERT_TRUE(probe->running_engine() == EngineKind::kDnnl) << c.layer;
  ExpectLayersAgree(
      c, [&] { return MakeLayerWithEngine(c.layer, EngineKind::kCaffe); },
      [&] { return MakeLayerWithEngine(c.layer, EngineKind::kDnnl); });
}

constexpr char kFillers[] =
    " weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' std: 0.3 }";

std::string Conv(const std::string& type, const std::string& options) {
  return "type: '" + type + "' convolution_param { " + options + kFillers + " }";
}

TEST(DnnlConvolutionTest, StridedPadded) {
  ExpectDnnlMatchesCaffe(NewCase(
      Conv("Convolution", "num_output: 4 kernel_size: 3 pad: 1 stride: 2"), {{2, 3, 7, 6}}));
}

TEST(DnnlConvolutionTest, ManyChannelsBlockedLayout) {
  // 19 -> 21 channels: blocked layouts pad the channels to their block.
  LayerCase c =
      NewCase(Conv("Convolution", "num_output: 21 kernel_size: 3 pad: 1"), {{2, 19, 5, 7}});
  c.tolerance = 2e-4f;  // sums of 171 products in another order
  ExpectDnnlMatchesCaffe(c);
}

TEST(DnnlConvolutionTest, GroupsDilationRectangular) {
  ExpectDnnlMatchesCaffe(NewCase(Conv("Convolution",
                                      "num_output: 6 group: 2 kernel_h: 3 kernel_w: 2 dilation: 2 "
                                      "stride_h: 1 stride_w: 2 pad_h: 2 pad_w: 1"),
                                 {{2, 4, 7, 9}}));
}

TEST(DnnlConvolutionTest, Depthwise) {
  ExpectDnnlMatchesCaffe(
      NewCase(Conv("Convolution", "num_output: 17 group: 17 kernel_size: 3 pad: 1 stride: 2"),
              {{3, 17, 9, 6}}));
}

TEST(DnnlConvolutionTest, OneByOneWithoutBias) {
  ExpectDnnlMatchesCaffe(NewCase(
      Conv("Convolution", "num_output: 3 kernel_size: 1 bias_term: false"), {{2, 5, 3, 4}}));
}

TEST(DnnlConvolutionTest, OneByOneStrided) {
  ExpectDnnlMatchesCaffe(
      NewCase(Conv("Convolution", "num_output: 7 kernel_size: 1 stride: 2"), {{1, 13, 5, 5}}));
}

TEST(DnnlConvolutionTest, TwoBottoms) {
  ExpectDnnlMatchesCaffe(NewCase(Conv("Convolution", "num_output: 2 kernel_size: 2 stride: 1"),
                                 {{2, 3, 4, 3}, {2, 3, 4, 3}}));
}

TEST(DnnlConvolutionTest, LargeOddImage) {
  LayerCase c = NewCase(Conv("Convolution", "num_output: 13 kernel_size: 5 pad: 2 stride: 3"),
                        {{3, 7, 127, 13}});
  c.check_gradient = false;
  c.tolerance = 1e-3f;  // sums of 175 products in another order
  ExpectDnnlMatchesCaffe(c);
}

TEST(DnnlConvolutionTest, DeconvolutionStridedPadded) {
  ExpectDnnlMatchesCaffe(NewCase(
      Conv("Deconvolution", "num_output: 4 kernel_size: 3 pad: 1 stride: 2"), {{2, 3, 4, 3}}));
}

TEST(DnnlConvolutionTest, DeconvolutionGroupsDilation) {
  ExpectDnnlMatchesCaffe(NewCase(Conv("Deconvolution",
                                      "num_output: 4 group: 2 kernel_h: 2 kernel_w: 3 dilation: 2 "
                                      "stride: 2 pad_w: 1 pad_h: 0"),
                                 {{1, 6, 3, 4}}));
}

TEST(DnnlConvolutionTest, DeconvolutionOneByOne) {
  ExpectDnnlMatchesCaffe(
      NewCase(Conv("Deconvolution", "num_output: 3 kernel_size: 1"), {{2, 2, 5, 3}, {2, 2, 5, 3}}));
}

// Param gradients add to what the diff held (iter_size accumulation), as in
// the CAFFE engine.
void ExpectParamGradientsAccumulate(const std::string& text) {
  auto layer = MakeLayerWithEngine(text, EngineKind::kDnnl);
  Blob x({2, 4, 6, 5}), y;
  FillGaussian(&x, 3);
  layer->SetUp({&x}, {&y});
  ASSERT_TRUE(layer->running_engine() == EngineKind::kDnnl);
  layer->Forward({&x}, {&y});
  FillGaussian(&y, 4);
  Copy(y.count(), y.cpu_data(), y.mutable_cpu_diff());
  std::vector<std::vector<float>> once;
  for (auto& blob : layer->blobs()) Set(blob->count(), 0.0f, blob->mutable_cpu_diff());
  layer->Backward({&y}, {false}, {&x});
  for (auto& blob : layer->blobs()) once.push_back(DiffOf(*blob));
  layer->Backward({&y}, {false}, {&x});
  for (size_t p = 0; p < once.size(); ++p) {
    std::vector<float> twice = once[p];
    for (float& v : twice) v *= 2;
    ExpectNear(DiffOf(*layer->blobs()[p]), twice, 1e-5f);
  }
}

TEST(DnnlConvolutionTest, ParamGradientsAccumulate) {
  ExpectParamGradientsAccumulate(Conv("Convolution", "num_output: 5 kernel_size: 3"));
}

std::string Pool(const std::string& options) {
  return "type: 'Pooling' pooling_param { " + options + " }";
}

/// MAX pooling's finite differences need inputs further apart than the
/// checker's step.
LayerCase MaxPoolCase(const std::string& options, std::vector<int64_t> shape) {
  LayerCase c = NewCase(Pool("pool: MAX " + options), {std::move(shape)});
  c.fill = [](int index, Blob* bottom) { FillDistinct(bottom, 1000 + index); };
  return c;
}

TEST(DnnlPoolingTest, MaxCeilRounding) {
  ExpectDnnlMatchesCaffe(MaxPoolCase("kernel_size: 3 stride: 2", {2, 3, 7, 8}));
}

TEST(DnnlPoolingTest, MaxPadded) {
  ExpectDnnlMatchesCaffe(
      NewCase(Pool("pool: MAX kernel_size: 3 stride: 2 pad: 1"), {{2, 5, 9, 6}}));
}

TEST(DnnlPoolingTest, AveragePartialWindows) {
  ExpectDnnlMatchesCaffe(NewCase(Pool("pool: AVE kernel_size: 3 stride: 2"), {{2, 3, 8, 7}}));
}

TEST(DnnlPoolingTest, AveragePadded) {
  ExpectDnnlMatchesCaffe(
      NewCase(Pool("pool: AVE kernel_size: 3 stride: 1 pad: 1"), {{1, 4, 5, 6}}));
}

TEST(DnnlPoolingTest, Global) {
  ExpectDnnlMatchesCaffe(NewCase(Pool("pool: AVE global_pooling: true"), {{3, 17, 7, 7}}));
  ExpectDnnlMatchesCaffe(MaxPoolCase("global_pooling: true", {2, 5, 6, 4}));
}

// ceil_mode: false (floor rounding): DenseNet's stem pool, and windows that
// stop short of the image's last row and column.
TEST(DnnlPoolingTest, MaxFloorRounding) {
  ExpectDnnlMatchesCaffe(
      MaxPoolCase("kernel_size: 3 stride: 2 pad: 1 ceil_mode: false", {2, 3, 8, 9}));
  ExpectDnnlMatchesCaffe(MaxPoolCase("kernel_size: 2 stride: 2 ceil_mode: false", {1, 3, 7, 5}));
}

TEST(DnnlPoolingTest, AverageFloorRounding) {
  // Padded AVE falls back in CEIL mode on this shape (see below); floor
  // windows never reach past in + pad, so oneDNN runs.
  ExpectDnnlMatchesCaffe(
      NewCase(Pool("pool: AVE kernel_size: 3 stride: 2 pad: 1 ceil_mode: false"), {{1, 4, 6, 7}}));
  ExpectDnnlMatchesCaffe(
      NewCase(Pool("pool: AVE kernel_size: 2 stride: 2 ceil_mode: false"), {{2, 3, 7, 5}}));
}

// Where oneDNN's windows are not Caffe's the CAFFE engine runs.
TEST(DnnlPoolingTest, FallsBackWhereWindowsDiffer) {
  // AVE with pad whose last window reaches past in + pad (CEIL rounding).
  auto ave =
      MakeLayerWithEngine(Pool("pool: AVE kernel_size: 3 stride: 2 pad: 1"), EngineKind::kDnnl);
  Blob x({1, 2, 6, 6}), y;
  ave->SetUp({&x}, {&y});
  EXPECT_FALSE(ave->running_engine() == EngineKind::kDnnl);
  // A mask top.
  auto mask = MakeLayerWithEngine(Pool("pool: MAX kernel_size: 2 stride: 2"), EngineKind::kDnnl);
  Blob m;
  mask->SetUp({&x}, {&y, &m});
  EXPECT_FALSE(mask->running_engine() == EngineKind::kDnnl);
}

std::string Lrn(const std::string& options) { return "type: 'LRN' lrn_param { " + options + " }"; }

TEST(DnnlLrnTest, AcrossChannels) {
  ExpectDnnlMatchesCaffe(NewCase(Lrn("local_size: 5 alpha: 0.5 beta: 0.75 k: 2"), {{2, 19, 5, 3}}));
}

TEST(DnnlLrnTest, AcrossFewChannels) {
  ExpectDnnlMatchesCaffe(NewCase(Lrn("local_size: 3 alpha: 1 beta: 0.6"), {{3, 2, 4, 7}}));
}

TEST(DnnlLrnTest, LargeImagesRunAChunkOfTheBatchAtATime) {
  // 4 MiB of floats an image: the primitives take one image a call (their
  // buffers and workspace sized for 8 MiB at most), three calls a pass, in
  // Caffe's layout and in the CPU's channel blocks, as CAFFE computes.
  const std::vector<int64_t> shape = {3, 16, 256, 256};
  LayerCase c = NewCase(Lrn("local_size: 5 alpha: 0.5 beta: 0.75 k: 2"), {shape});
  c.check_gradient = false;
  ExpectDnnlMatchesCaffe(c);
  c.candidate_block = DnnlChannelBlock();
  ExpectDnnlMatchesCaffe(c);
  auto layer = MakeLayerWithEngine(c.layer, EngineKind::kDnnl);
  Blob x(shape), y;
  layer->SetUp({&x}, {&y});
  const int64_t image_bytes = x.count() / shape[0] * static_cast<int64_t>(sizeof(float));
  for (const LayerBuffer& buffer : layer->buffers()) {
    EXPECT_LE(buffer.blob->data()->size(), 2 * image_bytes) << buffer.name;
  }
}

TEST(DnnlLrnTest, WithinChannelRunsCaffe) {
  auto layer =
      MakeLayerWithEngine(Lrn("local_size: 3 norm_region: WITHIN_CHANNEL"), EngineKind::kDnnl);
  Blob x({1, 2, 4, 4}), y;
  layer->SetUp({&x}, {&y});
  EXPECT_FALSE(layer->running_engine() == EngineKind::kDnnl);
}

std::string InnerProduct(const std::string& options) {
  return "type: 'InnerProduct' inner_product_param { " + options + kFillers + " }";
}

TEST(DnnlInnerProductTest, FourDimensionalBottomWithBias) {
  ExpectDnnlMatchesCaffe(NewCase(InnerProduct("num_output: 7"), {{3, 5, 4, 3}}));
}

TEST(DnnlInnerProductTest, AxisTwoWithoutBias) {
  ExpectDnnlMatchesCaffe(
      NewCase(InnerProduct("num_output: 7 axis: 2 bias_term: false"), {{3, 5, 4, 3}}));
}

TEST(DnnlInnerProductTest, TransposedWeights) {
  ExpectDnnlMatchesCaffe(NewCase(InnerProduct("num_output: 6 transpose: true"), {{4, 13}}));
  ExpectDnnlMatchesCaffe(NewCase(InnerProduct("num_output: 5 transpose: true"), {{2, 3, 2, 5}}));
}

TEST(DnnlInnerProductTest, OneRowManyOutputs) {
  LayerCase c = NewCase(InnerProduct("num_output: 127"), {{1, 131}});
  c.tolerance = 2e-4f;  // sums of 131 products in another order
  ExpectDnnlMatchesCaffe(c);
}

TEST(DnnlInnerProductTest, ParamGradientsAccumulate) {
  ExpectParamGradientsAccumulate(InnerProduct("num_output: 5"));
}

std::string Softmax(const std::string& options) {
  return "type: 'Softmax' softmax_param { " + options + " }";
}

TEST(DnnlSoftmaxTest, OverChannels) {
  ExpectDnnlMatchesCaffe(NewCase(Softmax("axis: 1"), {{2, 5, 3, 4}}));
}

TEST(DnnlSoftmaxTest, OverAnInnerAxis) {
  ExpectDnnlMatchesCaffe(NewCase(Softmax("axis: 2"), {{3, 2, 7, 3}}));
}

TEST(DnnlSoftmaxTest, OverTheLastAxis) {
  ExpectDnnlMatchesCaffe(NewCase(Softmax("axis: -1"), {{4, 13}}));
  ExpectDnnlMatchesCaffe(NewCase(Softmax("axis: 0"), {{17}}));
}

/// ReLU's finite differences need inputs away from the kink at 0.
LayerCase ReLUCase(const std::string& options, std::vector<int64_t> shape) {
  LayerCase c = NewCase("type: 'ReLU' relu_param { " + options + " }", {std::move(shape)});
  c.fill = [](int index, Blob* bottom) {
    FillGaussian(bottom, 1000 + index);
    float* x = bottom->mutable_cpu_data();
    for (int64_t i = 0; i < bottom->count(); ++i) x[i] += x[i] < 0 ? -0.1f : 0.1f;
  };
  return c;
}

TEST(DnnlReLUTest, Plain) { ExpectDnnlMatchesCaffe(ReLUCase("", {2, 3, 5, 7})); }

TEST(DnnlReLUTest, Leaky) { ExpectDnnlMatchesCaffe(ReLUCase("negative_slope: 0.1", {3, 19})); }

TEST(DnnlReLUTest, NegativeSlopeRunsCaffe) {
  auto layer =
      MakeLayerWithEngine("type: 'ReLU' relu_param { negative_slope: -1 }", EngineKind::kDnnl);
  Blob x({2, 3}), y;
  layer->SetUp({&x}, {&y});
  EXPECT_FALSE(layer->running_engine() == EngineKind::kDnnl);
}

/// The layer of `text` in place on the DNNL engine gives the CAFFE engine's
/// top and bottom gradient out of place.
void ExpectInPlaceMatchesCaffe(const std::string& text, const std::vector<int64_t>& shape) {
  Blob x(shape), y, z(shape);
  FillGaussian(&x, 5);
  z.CopyFrom(x);
  Blob dy(shape);
  FillGaussian(&dy, 6);
  auto caffe = MakeLayerWithEngine(text, EngineKind::kCaffe);
  caffe->SetUp({&x}, {&y});
  caffe->Forward({&x}, {&y});
  Copy(dy.count(), dy.cpu_data(), y.mutable_cpu_diff());
  caffe->Backward({&y}, {true}, {&x});
  auto dnnl = MakeLayerWithEngine(text, EngineKind::kDnnl);
  dnnl->SetUp({&z}, {&z});
  ASSERT_TRUE(dnnl->running_engine() == EngineKind::kDnnl);
  dnnl->Forward({&z}, {&z});
  ExpectNear(DataOf(z), DataOf(y), 1e-6f);
  Copy(dy.count(), dy.cpu_data(), z.mutable_cpu_diff());
  dnnl->Backward({&z}, {true}, {&z});
  ExpectNear(DiffOf(z), DiffOf(x), 1e-6f);
}

TEST(DnnlReLUTest, InPlace) {
  ExpectInPlaceMatchesCaffe("type: 'ReLU'", {2, 16, 3, 5});
  ExpectInPlaceMatchesCaffe("type: 'ReLU' relu_param { negative_slope: 0.25 }", {7, 3});
}

TEST(DnnlSoftmaxTest, InPlace) { ExpectInPlaceMatchesCaffe("type: 'Softmax'", {3, 6, 2}); }

std::string Eltwise(const std::string& options) {
  return "type: 'Eltwise' eltwise_param { " + options + " }";
}

TEST(DnnlEltwiseTest, SumWithCoefficients) {
  ExpectDnnlMatchesCaffe(NewCase(Eltwise("operation: SUM coeff: 0.5 coeff: -2 coeff: 1.5"),
                                 {{2, 3, 5, 7}, {2, 3, 5, 7}, {2, 3, 5, 7}}));
}

TEST(DnnlEltwiseTest, PlainSumOfTwo) {
  ExpectDnnlMatchesCaffe(NewCase(Eltwise("operation: SUM"), {{3, 17}, {3, 17}}));
}

TEST(DnnlEltwiseTest, SumGradientSkipsBottomsWithoutPropagation) {
  LayerCase c = NewCase(Eltwise("coeff: 2 coeff: 3"), {{2, 9}, {2, 9}});
  c.propagate_down = {false, true};
  ExpectDnnlMatchesCaffe(c);
}

TEST(DnnlEltwiseTest, ProductAndMaxRunCaffe) {
  for (const char* operation : {"operation: PROD", "operation: MAX"}) {
    auto layer = MakeLayerWithEngine(Eltwise(operation), EngineKind::kDnnl);
    Blob a({2, 3}), b({2, 3}), y;
    layer->SetUp({&a, &b}, {&y});
    EXPECT_FALSE(layer->running_engine() == EngineKind::kDnnl) << operation;
  }
}

// The net-wide engine CAFFE, or a layer's own engine, keeps oneDNN out.
TEST(DnnlEngineTest, EngineChoice) {
  Blob x({1, 3, 5, 5}), y;
  auto caffe_net =
      MakeLayerWithEngine(Conv("Convolution", "num_output: 2 kernel_size: 3"), EngineKind::kCaffe);
  caffe_net->SetUp({&x}, {&y});
  EXPECT_FALSE(caffe_net->running_engine() == EngineKind::kDnnl);
  auto own = MakeLayerWithEngine(Conv("Convolution", "num_output: 2 kernel_size: 3 engine: CAFFE"),
                                 EngineKind::kDefault);
  own->SetUp({&x}, {&y});
  EXPECT_FALSE(own->running_engine() == EngineKind::kDnnl);
  auto default_engine = MakeLayerWithEngine(Conv("Convolution", "num_output: 2 kernel_size: 3"),
                                            EngineKind::kDefault);
  default_engine->SetUp({&x}, {&y});
  EXPECT_TRUE(default_engine->running_engine() == EngineKind::kDnnl);
  auto own_dnnl = MakeLayerWithEngine(
      Conv("Convolution", "num_output: 2 kernel_size: 3 engine: DNNL"), EngineKind::kCaffe);
  own_dnnl->SetUp({&x}, {&y});
  EXPECT_TRUE(own_dnnl->running_engine() == EngineKind::kDnnl);
  // InnerProduct and Eltwise have no engine field: the net's engine decides.
  for (EngineKind engine : {EngineKind::kCaffe, EngineKind::kDefault, EngineKind::kDnnl}) {
    auto ip = MakeLayerWithEngine(InnerProduct("num_output: 2"), engine);
    Blob z;
    ip->SetUp({&x}, {&z});
    EXPECT_EQ(ip->running_engine() == EngineKind::kDnnl, engine != EngineKind::kCaffe);
    auto sum = MakeLayerWithEngine(Eltwise("operation: SUM"), engine);
    Blob x2({1, 3, 5, 5});
    sum->SetUp({&x, &x2}, {&z});
    EXPECT_EQ(sum->running_engine() == EngineKind::kDnnl, engine != EngineKind::kCaffe);
  }
  // The softmax inside SoftmaxWithLoss follows the net's engine too: a CAFFE
  // net runs no oneDNN (seen through the inner softmax's buffers).
  Blob scores({2, 3}), labels({2}), loss;
  auto caffe_loss = MakeLayerWithEngine("type: 'SoftmaxWithLoss'", EngineKind::kCaffe);
  caffe_loss->SetUp({&scores, &labels}, {&loss});
  for (const LayerBuffer& buffer : caffe_loss->buffers()) {
    EXPECT_EQ(buffer.name.find("dnnl"), std::string::npos) << buffer.name;
  }
}

}  // namespace
}  // namespace demi
