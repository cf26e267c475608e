// oneDNN's channel-blocked layout (Blob::channel_block()) between the layers
// that read it: each such layer on blocked blobs agrees with itself on
// Caffe's layout, and a net gives the layout exactly to the blobs only such
// layers touch, trains as it does in Caffe's layout, and still trains
// bit-identically planned and unplanned.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "demi/util/dnnl.hpp"
#include "layer_compare_util.hpp"
#include "net_test_util.hpp"

namespace demi {
namespace {

/// The layer of `text` on blocked blobs against itself on Caffe's layout.
void ExpectBlockedMatchesPlain(const std::string& text, std::vector<std::vector<int64_t>> bottoms,
                               bool check_gradient = true) {
  const int block = DnnlChannelBlock();
  if (block == 1) GTEST_SKIP() << "oneDNN prefers no blocked layout on this CPU";
  ExpectDnnlLayoutMatchesPlain(block, text, std::move(bottoms), check_gradient);
}

constexpr char kFillers[] =
    " weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'gaussian' std: 0.2 }";

TEST(BlockedLayoutLayerTest, BatchNormWithBatchStatistics) {
  ExpectBlockedMatchesPlain("type: 'BatchNorm'", {{3, 32, 3, 5}});
}

TEST(BlockedLayoutLayerTest, BatchNormWithGlobalStatistics) {
  // Zero running sums: the statistics are 0 mean, 0 variance (a scale of 1/sqrt(eps)).
  ExpectBlockedMatchesPlain("type: 'BatchNorm' batch_norm_param { use_global_stats: true }",
                            {{2, 16, 4, 3}}, /*check_gradient=*/false);
}

TEST(BlockedLayoutLayerTest, ScaleWithBias) {
  ExpectBlockedMatchesPlain(
      "type: 'Scale' scale_param { bias_term: true filler { type: 'gaussian' } "
      "bias_filler { type: 'gaussian' } }",
      {{2, 32, 3, 3}});
}

TEST(BlockedLayoutLayerTest, ScaleWithoutBias) {
  ExpectBlockedMatchesPlain("type: 'Scale' scale_param { filler { type: 'gaussian' } }",
                            {{3, 16, 2, 5}});
}

TEST(BlockedLayoutLayerTest, LeakyReLU) {
  // Gradient checks of the kinked layers are their own tests' (with kinks
  // left out); here the blocked layer must match the plain one.
  ExpectBlockedMatchesPlain("type: 'ReLU' relu_param { negative_slope: 0.1 }", {{2, 16, 3, 4}},
                            /*check_gradient=*/false);
}

TEST(BlockedLayoutLayerTest, EltwiseSumProductMax) {
  for (const char* operation :
       {"operation: SUM coeff: 0.5 coeff: -2", "operation: PROD", "operation: MAX"}) {
    SCOPED_TRACE(operation);
    ExpectBlockedMatchesPlain(StrCat("type: 'Eltwise' eltwise_param { ", operation, " }"),
                              {{2, 16, 3, 3}, {2, 16, 3, 3}}, /*check_gradient=*/false);
  }
}

TEST(BlockedLayoutLayerTest, ConcatAlongChannels) {
  ExpectBlockedMatchesPlain("type: 'Concat'", {{2, 16, 3, 3}, {2, 32, 3, 3}});
}

TEST(BlockedLayoutLayerTest, ConvolutionBetweenBlockedBlobs) {
  ExpectBlockedMatchesPlain(
      StrCat("type: 'Convolution' convolution_param { num_output: 32 kernel_size: 3 pad: 1 ",
             kFillers, " }"),
      {{2, 16, 6, 5}});
}

TEST(BlockedLayoutLayerTest, OneByOneConvolutionFromBlockedToCaffeLayout) {
  // 20 outputs do not divide into blocks: the top stays in Caffe's layout.
  ExpectBlockedMatchesPlain(
      StrCat("type: 'Convolution' convolution_param { num_output: 20 kernel_size: 1 ", kFillers,
             " }"),
      {{2, 32, 4, 3}});
}

TEST(BlockedLayoutLayerTest, ConvolutionFromCaffeLayoutToBlocked) {
  ExpectBlockedMatchesPlain(
      StrCat("type: 'Convolution' convolution_param { num_output: 16 kernel_size: 3 stride: 2 ",
             kFillers, " }"),
      {{2, 3, 7, 7}});
}

TEST(BlockedLayoutLayerTest, Deconvolution) {
  ExpectBlockedMatchesPlain(
      StrCat("type: 'Deconvolution' convolution_param { num_output: 16 kernel_size: 2 stride: 2 ",
             kFillers, " }"),
      {{2, 16, 3, 3}});
}

TEST(BlockedLayoutLayerTest, MaxAndAveragePooling) {
  for (const char* pool : {"MAX", "AVE"}) {
    SCOPED_TRACE(pool);
    ExpectBlockedMatchesPlain(
        StrCat("type: 'Pooling' pooling_param { pool: ", pool, " kernel_size: 3 stride: 2 }"),
        {{2, 16, 7, 7}}, /*check_gradient=*/false);
  }
}

TEST(BlockedLayoutLayerTest, Lrn) {
  ExpectBlockedMatchesPlain("type: 'LRN' lrn_param { local_size: 5 alpha: 0.5 beta: 0.75 }",
                            {{2, 32, 3, 4}});
}

TEST(BlockedLayoutLayerTest, InnerProductFromBlockedChannels) {
  ExpectBlockedMatchesPlain(
      StrCat("type: 'InnerProduct' inner_product_param { num_output: 10 ", kFillers, " }"),
      {{2, 32, 3, 3}});
}

// The cases above compare the DNNL engine with itself: on blocked blobs these
// layers really run their oneDNN primitives.
TEST(BlockedLayoutLayerTest, PrimitivesRunOnBlockedBlobs) {
  const int block = DnnlChannelBlock();
  if (block == 1) GTEST_SKIP() << "oneDNN prefers no blocked layout on this CPU";
  for (const char* text :
       {"type: 'ReLU' relu_param { negative_slope: 0.1 }", "type: 'Eltwise' eltwise_param { }",
        "type: 'InnerProduct' inner_product_param { num_output: 3 }"}) {
    SCOPED_TRACE(text);
    auto layer = MakeDnnlLayer(text);
    Blob a({2, 16, 3, 3}), b({2, 16, 3, 3}), top;
    a.set_channel_block(block);
    b.set_channel_block(block);
    std::vector<Blob*> bottom{&a};
    if (layer->MinBottomBlobs() == 2) bottom.push_back(&b);
    layer->SetUp(bottom, {&top});
    if (top.num_axes() == 4) {
      top.set_channel_block(block);
      layer->Reshape(bottom, {&top});
    }
    EXPECT_TRUE(layer->running_engine() == EngineKind::kDnnl);
    EXPECT_NE(layer->blocked_layouts(), BlobFormats::kNone);
  }
}

/// A small residual net with the layers of ResNet and GoogLeNet: the blobs
/// between oneDNN layers and the loops that read blocked channels can be
/// blocked; the data, the 20-channel conv's output, the fully connected
/// layer's input and the net's outputs cannot.
constexpr char kResidualNet[] = R"(
  name: "residual"
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param { shape { dim: 4 dim: 3 dim: 10 dim: 10 } shape { dim: 4 }
                       data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 32 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
  layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
    convolution_param { num_output: 32 kernel_size: 1 weight_filler { type: "xavier" } } }
  layer { name: "bn2" type: "BatchNorm" bottom: "conv2" top: "bn2" }
  layer { name: "sum" type: "Eltwise" bottom: "bn2" bottom: "conv1" top: "sum" }
  layer { name: "relu2" type: "ReLU" bottom: "sum" top: "sum" }
  layer { name: "conv3" type: "Convolution" bottom: "sum" top: "conv3"
    convolution_param { num_output: 16 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
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

/// kResidualNet with every blob kept for the user: all in Caffe's layout.
std::string KeepingEveryBlob() {
  std::string text = kResidualNet;
  for (const char* blob : {"data", "label", "conv1", "conv2", "bn2", "sum", "conv3", "concat",
                           "pool", "norm", "conv4", "ip", "loss"}) {
    text += StrCat(" keep_blob: '", blob, "'");
  }
  return text;
}

TEST(BlockedLayoutNetTest, BlocksTheBlobsOnlyBlockedLayersTouch) {
  const int block = DnnlChannelBlock();
  if (block == 1) GTEST_SKIP() << "oneDNN prefers no blocked layout on this CPU";
  NetParameter param = ParseText<NetParameter>(kResidualNet);
  param.mutable_state()->set_phase(TRAIN);
  Net net(param, Context());
  for (const char* name : {"conv1", "conv2", "bn2", "sum", "conv3", "concat", "pool", "norm"}) {
    EXPECT_EQ(net.blob_by_name(name)->channel_block(), block) << name;
  }
  for (const char* name : {"data", "conv4", "ip", "loss"}) {
    EXPECT_EQ(net.blob_by_name(name)->channel_block(), 1) << name;
  }
  // The split of `sum` (read by conv3 and concat) shares its layout.
  for (const std::shared_ptr<Blob>& blob : net.blobs()) {
    if (blob->data() == net.blob_by_name("sum")->data()) {
      EXPECT_EQ(blob->channel_block(), block);
    }
  }
  // Kept blobs are the user's: Caffe's layout.
  NetParameter kept = ParseText<NetParameter>(KeepingEveryBlob());
  kept.mutable_state()->set_phase(TRAIN);
  Net kept_net(kept, Context());
  for (const std::shared_ptr<Blob>& blob : kept_net.blobs()) {
    EXPECT_EQ(blob->channel_block(), 1);
  }
  // keep_blob: "*" does the same without naming them (split blobs included).
  NetParameter star = ParseText<NetParameter>(StrCat(kResidualNet, " keep_blob: '*'"));
  star.mutable_state()->set_phase(TRAIN);
  Net star_net(star, Context());
  for (size_t b = 0; b < star_net.blobs().size(); ++b) {
    EXPECT_EQ(star_net.blobs()[b]->channel_block(), 1) << star_net.blob_names()[b];
  }
}

TEST(BlockedLayoutNetTest, TrainsAsInCaffeLayout) {
  if (DnnlChannelBlock() == 1) GTEST_SKIP() << "oneDNN prefers no blocked layout on this CPU";
  const std::vector<float> blocked = TrainAndRecord(kResidualNet, ARENA);
  const std::vector<float> plain = TrainAndRecord(KeepingEveryBlob(), ARENA);
  ExpectNear(blocked, plain, 1e-4f);
}

TEST(BlockedLayoutNetTest, PlannedTrainsBitIdenticallyToUnplanned) {
  ExpectPlannedTrainingMatchesUnplanned(kResidualNet);
}

}  // namespace
}  // namespace demi
