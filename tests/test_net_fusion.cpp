// NetParameter.fuse_layers (net_fusion.cpp): a BatchNorm runs the in-place
// Scale after it in its own passes. The fused net computes what the unfused
// one does (within rounding), plans no more memory, keeps planned training
// bit-identical to unplanned, and hands each absorbed layer's gradients to
// replication's hook only once they are final.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "demi/net.hpp"
#include "net_test_util.hpp"
#include "storage_compare_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// The layers of `net` that another absorbed, by name.
std::vector<std::string> AbsorbedLayers(const Net& net) {
  std::vector<std::string> names;
  for (size_t i = 0; i < net.layers().size(); ++i) {
    if (net.layers()[i]->absorbed()) names.push_back(net.layer_names()[i]);
  }
  return names;
}

TEST(NetFusionTest, EachBatchNormAbsorbsTheScaleAfterIt) {
  auto fused = BlockNet(FLOAT, ARENA);
  EXPECT_EQ(AbsorbedLayers(*fused), (std::vector<std::string>{"scale1", "scale2a", "scale2b"}));
  EXPECT_EQ(fused->layer_by_name("scale2a")->absorbed_by(), "bn2a");
  auto apart = BlockNet(FLOAT, ARENA, Device::kCPU, false);
  EXPECT_TRUE(AbsorbedLayers(*apart).empty());
  // The Scale still owns its params, under its name.
  EXPECT_EQ(fused->learnable_params().size(), apart->learnable_params().size());
  EXPECT_EQ(fused->layer_by_name("scale1")->blobs().size(), 2u);
}

// FLOAT: the same gradients but for the order of float operations (the
// fused backward multiplies by gamma once, after the sums).
TEST(NetFusionTest, FusedBlockNetRunsAsTheUnfusedOne) {
  auto apart = BlockNet(FLOAT, NONE, Device::kCPU, false);
  auto fused = BlockNet(FLOAT, NONE);
  ExpectNetsRunNear(apart.get(), fused.get(), 1e-6f, 1e-5);
}

// 16 bits: the fused forward computes y from x_hat before rounding it, the
// pair from x_hat rounded; both stay within the types' rounding of each
// other.
TEST(NetFusionTest, FusedBlockNetRunsAsTheUnfusedOneInSixteenBits) {
  for (Type type : {BFLOAT16, FLOAT16}) {
    SCOPED_TRACE(Type_Name(type));
    auto apart = BlockNet(type, ARENA, Device::kCPU, false);
    auto fused = BlockNet(type, ARENA);
    ExpectNetsRunNear(apart.get(), fused.get(), 1e-2f, type == BFLOAT16 ? 5e-2 : 1e-2);
  }
}

TEST(NetFusionTest, FusedBlockNetPlansNoMoreMemory) {
  for (Type type : {FLOAT, BFLOAT16}) {
    auto apart = BlockNet(type, ARENA, Device::kCPU, false);
    auto fused = BlockNet(type, ARENA);
    EXPECT_LE(fused->memory_plan().arena_bytes, apart->memory_plan().arena_bytes)
        << Type_Name(type);
    EXPECT_LE(fused->memory_plan().lower_bound_bytes, apart->memory_plan().lower_bound_bytes);
  }
}

TEST(NetFusionTest, FusedPlannedNetTrainsBitIdenticalToUnplanned) {
  auto planned = BlockNet(FLOAT, ARENA);
  auto unplanned = BlockNet(FLOAT, NONE);
  ExpectPlannedMatchesUnplanned(planned.get(), unplanned.get());
  auto planned16 = BlockNet(BFLOAT16, ARENA);
  auto unplanned16 = BlockNet(BFLOAT16, NONE);
  ExpectPlannedMatchesUnplanned(planned16.get(), unplanned16.get());
}

/// conv -> BatchNorm -> Scale -> ReLU -> InnerProduct with a loss, the
/// BatchNorm in place or into its own top, and `scale` the Scale's
/// scale_param, its lr_mults `scale_lr` and `batch_norm` BatchNorm's params.
std::string PairNet(bool bn_in_place, const std::string& scale, const std::string& batch_norm = "",
                    const std::string& scale_lr = "") {
  const std::string normalized = bn_in_place ? "c" : "n";
  return R"(name: "pair")" + ConvStemText(6, 16) + R"(
    layer { name: "bn" type: "BatchNorm" bottom: "c" top: ")" +
         normalized + R"(" )" + batch_norm + R"( }
    layer { name: "scale" type: "Scale" bottom: ")" +
         normalized + R"(" top: ")" + normalized + R"(" )" + scale_lr + " scale_param { " + scale +
         R"( filler { type: "uniform" min: 0.5 max: 1.5 }
                             bias_filler { type: "uniform" min: -0.5 max: 0.5 } } }
    layer { name: "relu" type: "ReLU" bottom: ")" +
         normalized + R"(" top: ")" + normalized + R"(" }
    layer { name: "ip" type: "InnerProduct" bottom: ")" +
         normalized + R"(" top: "out" loss_weight: 1
            inner_product_param { num_output: 3 weight_filler { type: "xavier" } } })";
}

/// Three SGD steps of `text` with its pairs fused and apart: every loss and
/// gradient on the way within `tolerance` (relative to the largest of each
/// step's values), and `absorbed` the layers fused.
void ExpectFusedTrainsAsApart(const std::string& text, const std::vector<std::string>& absorbed,
                              float tolerance = 1e-5f) {
  NetParameter param = ParseText<NetParameter>(text);
  param.mutable_state()->set_phase(TRAIN);
  EXPECT_EQ(AbsorbedLayers(Net(param, Context())), absorbed);
  const std::vector<float> fused = TrainAndRecord(param.DebugString(), ARENA);
  param.set_fuse_layers(false);
  const std::vector<float> apart = TrainAndRecord(param.DebugString(), ARENA);
  ASSERT_EQ(fused.size(), apart.size());
  float largest = 0;
  for (float value : apart) largest = std::max(largest, std::abs(value));
  ExpectNear(fused, apart, tolerance * largest);
  EXPECT_NE(fused, std::vector<float>(fused.size(), 0.0f));
}

TEST(NetFusionTest, PairsOfEveryKindTrainAsApart) {
  SCOPED_TRACE("in place, with a bias");
  ExpectFusedTrainsAsApart(PairNet(true, "bias_term: true"), {"scale"});
  SCOPED_TRACE("into its own top, with a bias");
  ExpectFusedTrainsAsApart(PairNet(false, "bias_term: true"), {"scale"});
  SCOPED_TRACE("without a bias");
  ExpectFusedTrainsAsApart(PairNet(true, "bias_term: false"), {"scale"});
  SCOPED_TRACE("global statistics while the Scale learns (fine-tuning a detector)");
  ExpectFusedTrainsAsApart(
      PairNet(true, "bias_term: true", "batch_norm_param { use_global_stats: true eps: 0.5 }"),
      {"scale"});
  SCOPED_TRACE("a frozen scale, a learned bias");
  ExpectFusedTrainsAsApart(
      PairNet(true, "bias_term: true", "", "param { lr_mult: 0 } param { lr_mult: 1 }"), {"scale"});
}

// A BatchNorm into its own top, which an in-place Scale and ReLU then
// overwrite (DenseNet-121's pairs): its backward must not read the top's
// data, now the Scale's output. Apart, it trains as the same net with the
// BatchNorm in place; it read the overwritten top before 2026-12-06.
TEST(NetFusionTest, ABatchNormWhoseTopALaterLayerOverwritesTrainsAsInPlace) {
  for (bool fuse : {false, true}) {
    SCOPED_TRACE(fuse ? "fused" : "apart");
    NetParameter own_top = ParseText<NetParameter>(PairNet(false, "bias_term: true"));
    NetParameter in_place = ParseText<NetParameter>(PairNet(true, "bias_term: true"));
    own_top.set_fuse_layers(fuse);
    in_place.set_fuse_layers(fuse);
    const std::vector<float> expected = TrainAndRecord(in_place.DebugString(), ARENA);
    ExpectNear(TrainAndRecord(own_top.DebugString(), ARENA), expected, 1e-6f);
    ExpectNear(TrainAndRecord(own_top.DebugString(), NONE), expected, 1e-6f);
  }
}

TEST(NetFusionTest, FusedPairPlannedAndRecomputedTrainsBitIdenticalToUnplanned) {
  ExpectPlannedTrainingMatchesUnplanned(PairNet(true, "bias_term: true"));
  ExpectPlannedTrainingMatchesUnplanned(PairNet(false, "bias_term: false"));
}

// The Scale's gradients are final only after the BatchNorm's Backward:
// replication's hook (which starts all-reducing them) sees them there.
TEST(NetFusionTest, TheBackwardHookSeesAnAbsorbedLayerAfterItsAbsorber) {
  NetParameter param = ParseText<NetParameter>(PairNet(true, "bias_term: true"));
  param.mutable_state()->set_phase(TRAIN);
  Net net(param, Context());
  const int bn = net.layer_index("bn"), scale = net.layer_index("scale");
  Blob& gamma = *net.layer_by_name("scale")->blobs()[0];
  std::vector<int> order;
  std::vector<float> gamma_diff_at_hook;
  net.set_layer_backward_hook([&](int layer) {
    order.push_back(layer);
    if (layer == scale) gamma_diff_at_hook = DiffOf(gamma);
  });
  net.ClearParamDiffs();
  net.ForwardBackward();
  const auto at = std::find(order.begin(), order.end(), scale);
  ASSERT_NE(at, order.end());
  ASSERT_NE(at, order.begin());
  EXPECT_EQ(*(at - 1), bn);
  EXPECT_EQ(gamma_diff_at_hook, DiffOf(gamma));
  EXPECT_NE(gamma_diff_at_hook, std::vector<float>(gamma.count(), 0.0f));
}

TEST(NetFusionTest, OnlyAnInPlacePerChannelScaleReadingTheBatchNormAloneIsAbsorbed) {
  const auto absorbed = [](NetParameter param) {
    param.mutable_state()->set_phase(TRAIN);
    return AbsorbedLayers(Net(param, Context()));
  };
  const auto pair = [](bool bn_in_place, const std::string& scale,
                       const std::string& batch_norm = "") {
    return ParseText<NetParameter>(PairNet(bn_in_place, scale, batch_norm));
  };
  EXPECT_EQ(absorbed(pair(false, "bias_term: true")), std::vector<std::string>{"scale"});
  // The Scale writes a blob of its own.
  NetParameter out_of_place = pair(false, "bias_term: true");
  out_of_place.mutable_layer(3)->set_top(0, "s");
  out_of_place.mutable_layer(4)->set_bottom(0, "s");
  out_of_place.mutable_layer(4)->set_top(0, "s");
  out_of_place.mutable_layer(5)->set_bottom(0, "s");
  EXPECT_TRUE(absorbed(out_of_place).empty());
  // One scale per channel and row: not per channel.
  EXPECT_TRUE(absorbed(pair(true, "bias_term: true num_axes: 2")).empty());
  // A BatchNorm with scale_bias has an affine part already.
  EXPECT_TRUE(
      absorbed(pair(true, "bias_term: true", "batch_norm_param { scale_bias: true }")).empty());
  // A Scale that stops the gradient on its own keeps running itself.
  NetParameter stopped = pair(true, "bias_term: true");
  stopped.mutable_layer(3)->add_propagate_down(false);
  EXPECT_TRUE(absorbed(stopped).empty());
  // And the net can say no.
  NetParameter refused = pair(true, "bias_term: true");
  refused.set_fuse_layers(false);
  EXPECT_TRUE(absorbed(refused).empty());
}

}  // namespace
}  // namespace demi
