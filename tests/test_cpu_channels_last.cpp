// Channels last (NHWC: Blob::channel_block() == channels) on a CPU, which
// nets take for 16-bit blobs where oneDNN's convolutions read it (Intel AMX:
// DnnlPrefersChannelsLast) instead of reordering around each of them: every
// layer that reads it agrees with itself on Caffe's layout and passes its
// gradient check, channel counts that fill no group of 16 lanes included;
// the per-channel sums give the bits they give in 16-channel blocks; and a
// BFLOAT16 net given the preference on any CPU (ScopedDnnlChannelsLast)
// stores exactly the blobs its readers allow so, trains as it does in
// Caffe's layout, and trains bit-identically planned and unplanned.
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "demi/layers/channels_last_lrn.hpp"
#include "demi/layers/channels_last_max_pool.hpp"
#include "demi/layers/lrn_layer.hpp"
#include "demi/layers/pooling_layer.hpp"
#include "demi/util/bfloat16.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/dnnl.hpp"
#include "layer_compare_util.hpp"
#include "net_test_util.hpp"
#include "storage_compare_util.hpp"

namespace demi {
namespace {

/// The DNNL layer of `text` on channels-last blobs against itself on Caffe's
/// layout, then its gradient against finite differences.
void ExpectChannelsLastMatchesPlain(const std::string& text,
                                    std::vector<std::vector<int64_t>> bottoms,
                                    bool check_gradient = true) {
  ExpectDnnlLayoutMatchesPlain(kAllChannels, text, std::move(bottoms), check_gradient);
}

constexpr char kFillers[] =
    " weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'gaussian' std: 0.2 }";

// 40 channels: two groups of 16 lanes and one of 8; 24: one and a half.
TEST(CpuChannelsLastLayerTest, BatchNormWithBatchStatistics) {
  ExpectChannelsLastMatchesPlain("type: 'BatchNorm'", {{3, 40, 3, 5}});
}

TEST(CpuChannelsLastLayerTest, BatchNormWithGlobalStatistics) {
  ExpectChannelsLastMatchesPlain("type: 'BatchNorm' batch_norm_param { use_global_stats: true }",
                                 {{2, 24, 4, 3}}, /*check_gradient=*/false);
}

TEST(CpuChannelsLastLayerTest, ScaleWithBias) {
  ExpectChannelsLastMatchesPlain(
      "type: 'Scale' scale_param { bias_term: true filler { type: 'gaussian' } "
      "bias_filler { type: 'gaussian' } }",
      {{2, 40, 3, 3}});
}

TEST(CpuChannelsLastLayerTest, ScaleWithoutBias) {
  ExpectChannelsLastMatchesPlain("type: 'Scale' scale_param { filler { type: 'gaussian' } }",
                                 {{3, 24, 2, 5}});
}

TEST(CpuChannelsLastLayerTest, LeakyReLU) {
  ExpectChannelsLastMatchesPlain("type: 'ReLU' relu_param { negative_slope: 0.1 }", {{2, 24, 3, 4}},
                                 /*check_gradient=*/false);
}

TEST(CpuChannelsLastLayerTest, EltwiseSumProductMax) {
  for (const char* operation :
       {"operation: SUM coeff: 0.5 coeff: -2", "operation: PROD", "operation: MAX"}) {
    SCOPED_TRACE(operation);
    ExpectChannelsLastMatchesPlain(StrCat("type: 'Eltwise' eltwise_param { ", operation, " }"),
                                   {{2, 24, 3, 3}, {2, 24, 3, 3}}, /*check_gradient=*/false);
  }
}

TEST(CpuChannelsLastLayerTest, ConcatAlongChannels) {
  ExpectChannelsLastMatchesPlain("type: 'Concat'", {{2, 8, 3, 3}, {2, 24, 3, 3}});
}

TEST(CpuChannelsLastLayerTest, ConvolutionBetweenChannelsLastBlobs) {
  ExpectChannelsLastMatchesPlain(
      StrCat("type: 'Convolution' convolution_param { num_output: 40 kernel_size: 3 pad: 1 ",
             kFillers, " }"),
      {{2, 24, 6, 5}});
}

TEST(CpuChannelsLastLayerTest, ConvolutionOfThreeChannels) {
  ExpectChannelsLastMatchesPlain(
      StrCat("type: 'Convolution' convolution_param { num_output: 24 kernel_size: 3 stride: 2 ",
             kFillers, " }"),
      {{2, 3, 7, 7}});
}

// Our kernels (channels_last_lrn.hpp) against oneDNN's in Caffe's layout,
// windows past both ends of the channels included.
TEST(CpuChannelsLastLayerTest, LRNAcrossChannels) {
  for (const char* param : {"local_size: 3 alpha: 0.5", "local_size: 7 alpha: 2 k: 2"}) {
    SCOPED_TRACE(param);
    ExpectChannelsLastMatchesPlain(StrCat("type: 'LRN' lrn_param { ", param, " }"),
                                   {{2, 24, 4, 3}});
  }
}

TEST(CpuChannelsLastLayerTest, MaxAndAveragePooling) {
  for (const char* pool : {"MAX", "AVE"}) {
    SCOPED_TRACE(pool);
    ExpectChannelsLastMatchesPlain(
        StrCat("type: 'Pooling' pooling_param { pool: ", pool, " kernel_size: 3 stride: 2 }"),
        {{2, 24, 7, 7}}, /*check_gradient=*/false);
  }
}

/// `blob`'s data or diff as floats, in its own layout.
std::vector<float> RawFloats(const Blob& blob, bool diff) {
  const auto* values = static_cast<const float*>((diff ? blob.diff() : blob.data())->cpu_data());
  return std::vector<float>(values, values + blob.count());
}

/// The bits of `values`: NaNs compare equal.
std::vector<uint32_t> Bits(const std::vector<float>& values) {
  std::vector<uint32_t> bits(values.size());
  std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  return bits;
}

// Between channels-last blobs the DNNL layers run our kernels
// (channels_last_max_pool.hpp, channels_last_lrn.hpp): they say so, and
// through each layer come bit for bit what the kernels give on the same
// bytes, ties (small integers) and a NaN inside a window included. (oneDNN's
// LRN rounds otherwise; its max pooling gives these bits too.)
TEST(CpuChannelsLastLayerTest, MaxPoolingAndLRNRunOurKernels) {
  constexpr int64_t kChannels = 24;
  for (const bool pooling : {true, false}) {
    SCOPED_TRACE(pooling ? "Pooling" : "LRN");
    auto layer = MakeDnnlLayer(pooling ? "type: 'Pooling' pooling_param { pool: MAX kernel_size: 3 "
                                         "stride: 2 }"
                                       : "type: 'LRN' lrn_param { local_size: 5 alpha: 0.5 }");
    Blob x, y;
    x.set_channel_block(kChannels);
    x.Reshape({2, kChannels, 7, 7});
    layer->SetUp({&x}, {&y});
    y.set_channel_block(kChannels);
    layer->Reshape({&x}, {&y});
    ASSERT_EQ(layer->running_engine(), EngineKind::kDnnl);
    EXPECT_TRUE(pooling ? dynamic_cast<PoolingLayer&>(*layer).RunsChannelsLastKernels()
                        : dynamic_cast<LRNLayer&>(*layer).RunsChannelsLastKernels());
    auto* x_bytes = static_cast<float*>(x.data()->mutable_cpu_data());
    for (int64_t i = 0; i < x.count(); ++i) x_bytes[i] = static_cast<float>(i * 7 % 5);
    // A NaN inside a window: only its first element's NaN wins in Caffe's
    // rule (and ours), where oneDNN's max takes any.
    if (pooling) x_bytes[kChannels * 8] = std::numeric_limits<float>::quiet_NaN();
    layer->Forward({&x}, {&y});
    const std::vector<float> dy = RoundedGaussian(y.count(), 3, FLOAT);
    std::copy(dy.begin(), dy.end(), static_cast<float*>(y.diff()->mutable_cpu_data()));
    layer->Backward({&y}, {true}, {&x});
    const std::vector<float> in = RawFloats(x, false);
    std::vector<float> out(y.count()), dx(x.count());
    if (pooling) {
      const MaxPoolGeometry g{2, kChannels, 7, 7, 3, 3, 3, 3, 2, 2, 0, 0};
      std::vector<uint8_t> window(y.count());
      ChannelsLastMaxPoolForward(g, FLOAT, in.data(), out.data(), window.data());
      ChannelsLastMaxPoolBackward(g, FLOAT, dy.data(), window.data(), dx.data());
    } else {
      const LrnGeometry g{2 * 7 * 7, kChannels, 5, 0.5f, 1.0f};
      ChannelsLastLrnForward(g, FLOAT, in.data(), out.data());
      ChannelsLastLrnBackward(g, FLOAT, in.data(), dy.data(), dx.data());
    }
    EXPECT_EQ(Bits(RawFloats(y, false)), Bits(out));
    EXPECT_EQ(Bits(RawFloats(x, true)), Bits(dx));
  }
}

/// The cases of `layer_type` stored in BFLOAT16 channels last, of
/// `channels` channels, against the FLOAT layer in Caffe's layout
/// (storage_compare_util.hpp's tolerance), the convolution and pooling told
/// that oneDNN prefers it.
void ExpectBfloat16ChannelsLastLikeFloat(const std::string& layer_type, int64_t channels) {
  const ScopedDnnlChannelsLast amx(true);
  for (StorageCase c : StorageCasesOf(layer_type)) {
    SCOPED_TRACE(c.layer);
    c.shape[1] = channels;
    ExpectStoresLikeFloat(c, BFLOAT16, kChannelsLast);
  }
}

// In bfloat16 the sums over more than 16 channels run image by image
// (channels_last_sums.hpp): 40 channels fill part of one group of 64 lanes,
// 80 one and a part of another.
TEST(CpuChannelsLastLayerTest, Bfloat16BatchNorm) {
  ExpectBfloat16ChannelsLastLikeFloat("BatchNorm", 40);
  ExpectBfloat16ChannelsLastLikeFloat("BatchNorm", 80);
}

TEST(CpuChannelsLastLayerTest, Bfloat16Scale) {
  ExpectBfloat16ChannelsLastLikeFloat("Scale", 40);
  ExpectBfloat16ChannelsLastLikeFloat("Scale", 80);
}

TEST(CpuChannelsLastLayerTest, Bfloat16Eltwise) {
  ExpectBfloat16ChannelsLastLikeFloat("Eltwise", 24);
}

TEST(CpuChannelsLastLayerTest, Bfloat16Split) { ExpectBfloat16ChannelsLastLikeFloat("Split", 24); }

// Max pooling runs our kernels here (channels_last_max_pool.hpp): 40
// channels fill part of one chunk of 64, 80 one and a part of another.
TEST(CpuChannelsLastLayerTest, Bfloat16Pooling) {
  ExpectBfloat16ChannelsLastLikeFloat("Pooling", 40);
  ExpectBfloat16ChannelsLastLikeFloat("Pooling", 80);
  const ScopedDnnlChannelsLast amx(true);
  ExpectStoresLikeFloat(
      {"type: 'Pooling' pooling_param { pool: MAX kernel_size: 3 stride: 1 pad: 1 }",
       1,
       1,
       {2, 80, 5, 6}},
      BFLOAT16, kChannelsLast);
}

TEST(CpuChannelsLastLayerTest, Bfloat16LRN) { ExpectBfloat16ChannelsLastLikeFloat("LRN", 40); }

TEST(CpuChannelsLastLayerTest, Bfloat16ReLU) {
  const ScopedDnnlChannelsLast amx(true);
  ExpectStoresLikeFloat({"type: 'ReLU'", 1, 1, {2, 24, 5, 3}}, BFLOAT16, kChannelsLast);
}

TEST(CpuChannelsLastLayerTest, Bfloat16Concat) {
  const ScopedDnnlChannelsLast amx(true);
  StorageCase concat = StorageCasesOf("Concat")[0];
  concat.bottom_channels = {8, 24, 40};
  ExpectStoresLikeFloat(concat, BFLOAT16, kChannelsLast);
}

TEST(CpuChannelsLastLayerTest, Bfloat16Convolution) {
  const ScopedDnnlChannelsLast amx(true);
  // 3x3; and 1x1, whose weight and bias gradients are matmuls where it
  // computes in bfloat16 on a CPU that does, and its image gradient too
  // from 64 output channels (PointwiseConvolutionMatmuls), strided through
  // its gathered pixels.
  for (const char* math : {"", " forward_math: BFLOAT16 backward_math: BFLOAT16"}) {
    for (const char* geometry :
         {"num_output: 40 kernel_size: 3 pad: 1", "num_output: 64 kernel_size: 1 bias_term: false",
          "num_output: 40 kernel_size: 1", "num_output: 64 kernel_size: 1 stride: 2",
          "num_output: 40 kernel_size: 1 stride: 2",
          "num_output: 64 kernel_size: 1 stride_h: 3 stride_w: 2 bias_term: false"}) {
      SCOPED_TRACE(StrCat(geometry, math));
      StorageCase c;
      c.layer = StrCat("type: 'Convolution' convolution_param { ", geometry, kStorageFillers, " }");
      c.shape = {2, 24, 5, 3};
      c.narrow_fields = math;  // the reference computes FLOAT
      ExpectStoresLikeFloat(c, BFLOAT16, kChannelsLast);
    }
  }
}

/// The DNNL 1x1 convolution of `outputs` outputs and `fields` (more of its
/// convolution_param) from x (2 x 24 x 5 x 3) into y, both BFLOAT16 channels
/// last, in bfloat16 math: forward run, and y's diff filled.
std::unique_ptr<Layer> OneByOneAfterForward(int64_t outputs, const std::string& fields, Blob* x,
                                            Blob* y) {
  auto layer = MakeDnnlLayer(StrCat("type: 'Convolution' convolution_param { num_output: ", outputs,
                                    " kernel_size: 1 ", fields, kStorageFillers, " }",
                                    StorageFields(BFLOAT16),
                                    " forward_math: BFLOAT16 backward_math: BFLOAT16"));
  for (Blob* blob : {x, y}) blob->set_storage_type(BFLOAT16);
  x->set_channel_block(24);
  x->Reshape({2, 24, 5, 3});
  layer->SetUp({x}, {y});
  y->set_channel_block(outputs);
  layer->Reshape({x}, {y});
  EXPECT_EQ(layer->running_engine(), EngineKind::kDnnl);
  if (DnnlComputesBfloat16()) {
    EXPECT_EQ(layer->engine().types.backward_math, BFLOAT16);
  }
  StoreValues(x, RoundedGaussian(x->count(), 5, BFLOAT16), false);
  layer->Forward({x}, {y});
  StoreValues(y, RoundedGaussian(y->count(), 6, BFLOAT16), true);
  return layer;
}

/// Caffe adds each backward's weight gradient to the param's diff (the
/// matmul's where it computes in bfloat16).
void ExpectOneByOneWeightGradientAccumulates(int stride) {
  const ScopedDnnlChannelsLast amx(true);
  Blob x, y;
  auto layer = OneByOneAfterForward(40, StrCat("bias_term: false stride: ", stride), &x, &y);
  Blob& weights = *layer->blobs()[0];
  Set(weights.count(), 0.0f, weights.mutable_cpu_diff());
  layer->Backward({&y}, {false}, {&x});
  const std::vector<float> once = DiffOf(weights);
  layer->Backward({&y}, {false}, {&x});
  const std::vector<float> twice = DiffOf(weights);
  ASSERT_NE(once, std::vector<float>(once.size(), 0.0f));
  for (size_t i = 0; i < once.size(); ++i) ASSERT_EQ(twice[i], 2 * once[i]) << i;
}

TEST(CpuChannelsLastLayerTest, Bfloat16OneByOneWeightGradientAccumulates) {
  ExpectOneByOneWeightGradientAccumulates(1);
  ExpectOneByOneWeightGradientAccumulates(2);
}

/// A 1x1 whose weights are frozen (no weight gradient) and whose bias
/// learns: the bias gradient, the image gradient (a matmul from 64 outputs)
/// and the untouched weight diff are those of the layer learning both.
void ExpectOneByOneBiasLearnsAlone(int stride) {
  const ScopedDnnlChannelsLast amx(true);
  Blob x, y;
  auto layer = OneByOneAfterForward(64, StrCat("stride: ", stride), &x, &y);
  Blob &weights = *layer->blobs()[0], &bias = *layer->blobs()[1];
  const auto backward = [&] {
    Set(bias.count(), 0.0f, bias.mutable_cpu_diff());
    Set(weights.count(), 3.0f, weights.mutable_cpu_diff());
    layer->Backward({&y}, {true}, {&x});
    return std::make_pair(DiffOf(bias), ValuesOf(x, /*diff=*/true));
  };
  const auto both = backward();
  ASSERT_NE(DiffOf(weights), std::vector<float>(weights.count(), 3.0f));
  layer->set_param_propagate_down(0, false);
  const auto bias_alone = backward();
  EXPECT_EQ(DiffOf(weights), std::vector<float>(weights.count(), 3.0f));
  ASSERT_NE(both.first, std::vector<float>(bias.count(), 0.0f));
  EXPECT_EQ(bias_alone.first, both.first);
  EXPECT_EQ(bias_alone.second, both.second);
}

TEST(CpuChannelsLastLayerTest, Bfloat16OneByOneBiasLearnsWithFrozenWeights) {
  ExpectOneByOneBiasLearnsAlone(1);
  ExpectOneByOneBiasLearnsAlone(2);
}

/// Per-channel sums of `values` (N x C x HW in Caffe's layout) stored as T
/// in layout `block` (1, 16, or C: channels last), by SumChannelsOf.
template <typename T>
std::vector<double> SumsIn(const std::vector<float>& values, int64_t num, int64_t channels,
                           int64_t inner, int64_t block) {
  Blob shape({num, channels, 1, inner});
  std::vector<float> moved(values.size());
  CopyChannels(shape, values.data(), 1, moved.data(), static_cast<int>(block));
  const std::vector<T> stored(moved.begin(), moved.end());
  std::vector<double> sum(channels), square(channels);
  SumChannelsOf<T, 2>(ChannelBlocks{num, channels, inner, block}, {sum.data(), square.data()},
                      [&](int64_t k, int64_t) {
                        const float v = static_cast<float>(stored[k]);
                        return std::array<float, 2>{v, v * v};
                      });
  sum.insert(sum.end(), square.begin(), square.end());
  return sum;
}

template <typename T>
void ExpectChannelsLastSumsAsInBlocks() {
  constexpr int64_t kNum = 3, kChannels = 48, kInner = 37;
  std::vector<float> values(kNum * kChannels * kInner);
  for (size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k % 101) / 7.0f - 5;
  EXPECT_EQ(SumsIn<T>(values, kNum, kChannels, kInner, kChannels),
            SumsIn<T>(values, kNum, kChannels, kInner, 16));
}

TEST(CpuChannelsLastSumsTest, AddInTheOrderOfSixteenChannelBlocks) {
  ExpectChannelsLastSumsAsInBlocks<float>();
  ExpectChannelsLastSumsAsInBlocks<bfloat16>();
}

/// test_blocked_layouts.cpp's residual net in BFLOAT16: convolutions (conv2
/// a 1x1 without a bias: channels last, its weight gradient a matmul where
/// oneDNN computes bfloat16; of 40 outputs, its image gradient oneDNN's
/// kernel), BatchNorm, Scale, ReLU, a residual sum, a
/// concatenation, pooling, an LRN, and a fully connected layer.
constexpr char kResidualNet[] = R"(
  name: "residual" precision: BFLOAT16
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param { shape { dim: 4 dim: 3 dim: 10 dim: 10 } shape { dim: 4 }
                       data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 40 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
  layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
    convolution_param { num_output: 40 kernel_size: 1 bias_term: false
                        weight_filler { type: "xavier" } } }
  layer { name: "bn2" type: "BatchNorm" bottom: "conv2" top: "bn2" }
  layer { name: "sum" type: "Eltwise" bottom: "bn2" bottom: "conv1" top: "sum" }
  layer { name: "relu2" type: "ReLU" bottom: "sum" top: "sum" }
  layer { name: "conv3" type: "Convolution" bottom: "sum" top: "conv3"
    convolution_param { num_output: 24 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
  layer { name: "concat" type: "Concat" bottom: "sum" bottom: "conv3" top: "concat" }
  layer { name: "pool" type: "Pooling" bottom: "concat" top: "pool"
    pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: "norm" type: "LRN" bottom: "pool" top: "norm" lrn_param { local_size: 3 } }
  layer { name: "conv4" type: "Convolution" bottom: "norm" top: "conv4"
    convolution_param { num_output: 20 kernel_size: 3 weight_filler { type: "xavier" } } }
  layer { name: "ip" type: "InnerProduct" bottom: "conv4" top: "ip"
    inner_product_param { num_output: 5 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
)";

std::unique_ptr<Net> ResidualNet(const std::string& text = kResidualNet) {
  NetParameter param = ParseText<NetParameter>(text);
  param.mutable_state()->set_phase(TRAIN);
  return std::make_unique<Net>(param, Context());
}

TEST(CpuChannelsLastNetTest, StoresTheBlobsOnlyItsReadersTouchChannelsLast) {
  const ScopedDnnlChannelsLast amx(true);
  std::unique_ptr<Net> net = ResidualNet();
  // The fully connected layer reads Caffe's layout: conv4's top stays in
  // it, as do the data and the outputs.
  for (const char* name : {"conv1", "conv2", "bn2", "sum", "conv3", "concat", "pool", "norm"}) {
    const Blob& blob = *net->blob_by_name(name);
    EXPECT_TRUE(blob.channels_last()) << name;
    EXPECT_EQ(blob.storage_type(), BFLOAT16) << name;
  }
  for (const char* name : {"data", "conv4", "ip", "loss"}) {
    EXPECT_EQ(net->blob_by_name(name)->channel_block(), 1) << name;
  }
}

TEST(CpuChannelsLastNetTest, NotInFloatNorWhereTheNetSaysNo) {
  const ScopedDnnlChannelsLast amx(true);
  std::string in_float = kResidualNet;
  in_float.replace(in_float.find("BFLOAT16"), 8, "FLOAT");
  std::unique_ptr<Net> net = ResidualNet(in_float);
  EXPECT_FALSE(net->blob_by_name("conv1")->channels_last());
  std::unique_ptr<Net> refused = ResidualNet(StrCat(kResidualNet, " channels_last: false"));
  EXPECT_FALSE(refused->blob_by_name("conv1")->channels_last());
}

/// The records of `text` trained with channels last preferred (its blob
/// `channels_last_blob` then stored so), then not: in channel blocks, or
/// Caffe's layout where its channels fill none.
std::pair<std::vector<float>, std::vector<float>> TrainWithAndWithoutChannelsLast(
    const std::string& text, const char* channels_last_blob) {
  std::pair<std::vector<float>, std::vector<float>> records;
  {
    const ScopedDnnlChannelsLast amx(true);
    EXPECT_TRUE(ResidualNet(text)->blob_by_name(channels_last_blob)->channels_last());
    records.first = TrainAndRecord(text, ARENA);
  }
  const ScopedDnnlChannelsLast avx512(false);
  records.second = TrainAndRecord(text, ARENA);
  return records;
}

TEST(CpuChannelsLastNetTest, TrainsAsInCaffesLayout) {
  // 40 and 24 channels fill no blocks of 16 (or 8): Caffe's layout.
  const auto [last, plain] = TrainWithAndWithoutChannelsLast(kResidualNet, "conv1");
  // The same bfloat16 values; the sums in another order.
  ExpectNear(last, plain, 1e-3f);
}

/// A ResNet-like BFLOAT16 net whose channels fill blocks of 16: BatchNorm
/// with Scale and ReLU absorbed (the gated sums, over 32 and 80 channels), a
/// branch and a sum, and MAX pooling into a FLOAT loss. Its convolutions
/// are 3x3: a 1x1 between channels-last blobs takes its gradients from
/// matmuls, which sum in another order (kResidualNet's conv2).
constexpr char kBlockedChannelsNet[] = R"(
  name: "blocks" precision: BFLOAT16
  layer { name: "data" type: "DummyData" top: "data" top: "target"
    dummy_data_param { shape { dim: 4 dim: 3 dim: 10 dim: 10 } shape { dim: 4 dim: 32 dim: 5 dim: 5 }
                       data_filler { type: "gaussian" } data_filler { type: "gaussian" } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 32 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
  layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
    convolution_param { num_output: 80 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
  layer { name: "bn2" type: "BatchNorm" bottom: "conv2" top: "conv2" }
  layer { name: "scale2" type: "Scale" bottom: "conv2" top: "conv2" scale_param { bias_term: true } }
  layer { name: "relu2" type: "ReLU" bottom: "conv2" top: "conv2" }
  layer { name: "conv3" type: "Convolution" bottom: "conv2" top: "conv3"
    convolution_param { num_output: 32 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
  layer { name: "sum" type: "Eltwise" bottom: "conv3" bottom: "conv1" top: "sum" }
  layer { name: "relu3" type: "ReLU" bottom: "sum" top: "sum" }
  layer { name: "pool" type: "Pooling" bottom: "sum" top: "pool"
    pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "pool" bottom: "target" top: "loss" }
)";

TEST(CpuChannelsLastNetTest, TrainsBitIdenticallyToChannelBlocks) {
  // Where oneDNN computes bfloat16, its convolutions pick their layouts
  // (reorders move the numbers exactly), and the per-channel sums keep their
  // order: the same bits. Where BFLOAT16 is a storage type (no AVX-512), a
  // widened convolution runs FLOAT in each blob's own layout: other kernels.
  const auto [last, blocked] = TrainWithAndWithoutChannelsLast(kBlockedChannelsNet, "conv2");
  if (DnnlComputesBfloat16()) {
    EXPECT_EQ(last, blocked);
  } else {
    ExpectNear(last, blocked, 1e-4f);
  }
}

TEST(CpuChannelsLastNetTest, PlannedTrainsBitIdenticallyToUnplanned) {
  const ScopedDnnlChannelsLast amx(true);
  ExpectPlannedTrainingMatchesUnplanned(kResidualNet);
}

/// ResNet's downsampling: 1x1 convolutions of stride 2 with and without a
/// bias, of 64 outputs, whose whole backward is matmuls where oneDNN
/// computes bfloat16 (PointwiseConvolutionMatmuls): the pixels they read
/// gathered into a planned buffer, their image gradients scattered back.
constexpr char kStridedOneByOneNet[] = R"(
  name: "strided" precision: BFLOAT16
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param { shape { dim: 4 dim: 3 dim: 9 dim: 9 } shape { dim: 4 }
                       data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 40 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
  layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  layer { name: "down" type: "Convolution" bottom: "conv1" top: "down"
    convolution_param { num_output: 64 kernel_size: 1 stride: 2 weight_filler { type: "xavier" }
                        bias_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "branch" type: "Convolution" bottom: "conv1" top: "branch"
    convolution_param { num_output: 64 kernel_size: 1 stride: 2 bias_term: false
                        weight_filler { type: "xavier" } } }
  layer { name: "sum" type: "Eltwise" bottom: "down" bottom: "branch" top: "sum" }
  layer { name: "relu2" type: "ReLU" bottom: "sum" top: "sum" }
  layer { name: "conv2" type: "Convolution" bottom: "sum" top: "conv2"
    convolution_param { num_output: 40 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
  layer { name: "pool" type: "Pooling" bottom: "conv2" top: "pool"
    pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: "ip" type: "InnerProduct" bottom: "pool" top: "ip"
    inner_product_param { num_output: 5 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
)";

TEST(CpuChannelsLastNetTest, StridedOneByOnesTrainAsInCaffesLayoutAndPlanned) {
  const auto [last, plain] = TrainWithAndWithoutChannelsLast(kStridedOneByOneNet, "down");
  // The same bfloat16 values; the sums in another order.
  ExpectNear(last, plain, 1e-3f);
  const ScopedDnnlChannelsLast amx(true);
  ExpectPlannedTrainingMatchesUnplanned(kStridedOneByOneNet);
}

}  // namespace
}  // namespace demi
