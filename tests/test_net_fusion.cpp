// NetParameter.fuse_layers (net_fusion.cpp): a BatchNorm runs the in-place
// Scale and ReLU after it in its own passes. The fused net computes what the
// unfused one does (within rounding), plans no more memory, keeps planned
// training bit-identical to unplanned, and hands each absorbed layer's
// gradients to replication's hook only once they are final.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
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

TEST(NetFusionTest, EachBatchNormAbsorbsTheScaleAndReLUAfterIt) {
  auto fused = BlockNet(FLOAT, ARENA);
  // Not relu_sum: it follows an Eltwise.
  EXPECT_EQ(AbsorbedLayers(*fused),
            (std::vector<std::string>{"scale1", "relu1", "scale2a", "relu2a", "scale2b"}));
  EXPECT_EQ(fused->layer_by_name("scale2a")->absorbed_by(), "bn2a");
  EXPECT_EQ(fused->layer_by_name("relu2a")->absorbed_by(), "bn2a");
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

// 16 bits: apart, the Scale's output is rounded before the ReLU reads it;
// both stay within the types' rounding of each other.
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
/// scale_param, its lr_mults `scale_lr`, `batch_norm` BatchNorm's params and
/// `relu` the ReLU's.
std::string TripleNet(bool bn_in_place, const std::string& scale,
                      const std::string& batch_norm = "", const std::string& scale_lr = "",
                      const std::string& relu = "") {
  const std::string normalized = bn_in_place ? "c" : "n";
  return R"(name: "pair")" + ConvStemText(6, 16) + R"(
    layer { name: "bn" type: "BatchNorm" bottom: "c" top: ")" +
         normalized + R"(" )" + batch_norm + R"( }
    layer { name: "scale" type: "Scale" bottom: ")" +
         normalized + R"(" top: ")" + normalized + R"(" )" + scale_lr + " scale_param { " + scale +
         R"( filler { type: "uniform" min: 0.5 max: 1.5 }
                             bias_filler { type: "uniform" min: -0.5 max: 0.5 } } }
    layer { name: "relu" type: "ReLU" bottom: ")" +
         normalized + R"(" top: ")" + normalized + R"(" )" + relu + R"( }
    layer { name: "ip" type: "InnerProduct" bottom: ")" +
         normalized + R"(" top: "out" loss_weight: 1
            inner_product_param { num_output: 3 weight_filler { type: "xavier" } } })";
}

/// `got`, what TrainAndRecord recorded, within `tolerance` of `want`
/// relative to want's largest value; and not all zeros.
void ExpectRecordsNear(const std::vector<float>& got, const std::vector<float>& want,
                       float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  float largest = 0;
  for (float value : want) largest = std::max(largest, std::abs(value));
  ExpectNear(got, want, tolerance * largest);
  EXPECT_NE(got, std::vector<float>(got.size(), 0.0f));
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
  ExpectRecordsNear(fused, TrainAndRecord(param.DebugString(), ARENA), tolerance);
}

TEST(NetFusionTest, TriplesOfEveryKindTrainAsApart) {
  const std::vector<std::string> triple = {"scale", "relu"};
  SCOPED_TRACE("in place, with a bias");
  ExpectFusedTrainsAsApart(TripleNet(true, "bias_term: true"), triple);
  SCOPED_TRACE("into its own top, with a bias");
  ExpectFusedTrainsAsApart(TripleNet(false, "bias_term: true"), triple);
  SCOPED_TRACE("without a bias");
  ExpectFusedTrainsAsApart(TripleNet(true, "bias_term: false"), triple);
  SCOPED_TRACE("global statistics while the Scale learns (fine-tuning a detector)");
  ExpectFusedTrainsAsApart(
      TripleNet(true, "bias_term: true", "batch_norm_param { use_global_stats: true eps: 0.5 }"),
      triple);
  SCOPED_TRACE("a frozen scale, a learned bias");
  ExpectFusedTrainsAsApart(
      TripleNet(true, "bias_term: true", "", "param { lr_mult: 0 } param { lr_mult: 1 }"), triple);
  SCOPED_TRACE("a leaky ReLU");
  ExpectFusedTrainsAsApart(
      TripleNet(true, "bias_term: true", "", "", "relu_param { negative_slope: 0.2 }"), triple);
}

// NVCaffe's BatchNorm with scale_bias, then a ReLU: the ReLU alone is absorbed.
TEST(NetFusionTest, AScaleBiasBatchNormAbsorbsTheReLUAfterIt) {
  NetParameter param = ParseText<NetParameter>(TripleNet(true, "bias_term: true"));
  param.mutable_layer()->DeleteSubrange(3, 1);  // the Scale
  param.mutable_layer(2)->mutable_batch_norm_param()->set_scale_bias(true);
  param.mutable_layer(2)->mutable_batch_norm_param()->mutable_bias_filler()->set_type("gaussian");
  ExpectFusedTrainsAsApart(param.DebugString(), {"relu"});
}

// The fused backward takes the ReLU's signs from x_hat, not from the top: a
// later in-place layer may overwrite the top (apart, the ReLU's backward
// would read the overwritten values; Caffe's too). Against the same net with
// that layer writing a blob of its own, apart.
TEST(NetFusionTest, AFusedReLUWhoseTopALaterLayerOverwritesTrainsAsApart) {
  NetParameter in_place = ParseText<NetParameter>(TripleNet(true, "bias_term: true"));
  LayerParameter* shift = in_place.mutable_layer()->Add();
  shift->set_name("shift");
  shift->set_type("Power");
  shift->add_bottom("c");
  shift->add_top("c");
  shift->mutable_power_param()->set_shift(-0.5f);  // makes half the ReLU's zeros negative
  // Before the InnerProduct, which reads its output.
  in_place.mutable_layer()->SwapElements(in_place.layer_size() - 1, in_place.layer_size() - 2);
  NetParameter own_top = in_place;
  own_top.mutable_layer(5)->set_top(0, "shifted");
  own_top.mutable_layer(6)->set_bottom(0, "shifted");
  own_top.set_fuse_layers(false);
  in_place.mutable_state()->set_phase(TRAIN);
  EXPECT_EQ(AbsorbedLayers(Net(in_place, Context())), (std::vector<std::string>{"scale", "relu"}));
  ExpectRecordsNear(TrainAndRecord(in_place.DebugString(), ARENA),
                    TrainAndRecord(own_top.DebugString(), ARENA), 1e-5f);
}

// A BatchNorm into its own top, which an in-place Scale and ReLU then
// overwrite (DenseNet-121's pairs): its backward must not read the top's
// data, now the Scale's output. Apart, it trains as the same net with the
// BatchNorm in place; it read the overwritten top before 2026-12-06.
TEST(NetFusionTest, ABatchNormWhoseTopALaterLayerOverwritesTrainsAsInPlace) {
  for (bool fuse : {false, true}) {
    SCOPED_TRACE(fuse ? "fused" : "apart");
    NetParameter own_top = ParseText<NetParameter>(TripleNet(false, "bias_term: true"));
    NetParameter in_place = ParseText<NetParameter>(TripleNet(true, "bias_term: true"));
    own_top.set_fuse_layers(fuse);
    in_place.set_fuse_layers(fuse);
    const std::vector<float> expected = TrainAndRecord(in_place.DebugString(), ARENA);
    ExpectNear(TrainAndRecord(own_top.DebugString(), ARENA), expected, 1e-6f);
    ExpectNear(TrainAndRecord(own_top.DebugString(), NONE), expected, 1e-6f);
  }
}

TEST(NetFusionTest, FusedTriplePlannedAndRecomputedTrainsBitIdenticalToUnplanned) {
  ExpectPlannedTrainingMatchesUnplanned(TripleNet(true, "bias_term: true"));
  ExpectPlannedTrainingMatchesUnplanned(TripleNet(false, "bias_term: false"));
}

// Under the smallest budget the net drops a fused BatchNorm's top and
// replays the triple in backward, training bit for bit as without.
TEST(NetFusionTest, AFusedTripleReplaysUnderTheSmallestBudget) {
  NetParameter param = ParseText<NetParameter>(kBlockNet);
  param.mutable_state()->set_phase(TRAIN);
  const size_t smallest = SmallestRecomputedArena(param);
  param.set_memory_budget(smallest);
  const Net net(param, Context());
  std::set<std::string> replayed;
  for (const auto& layers : net.recomputation().replays) {
    for (int layer : layers) replayed.insert(net.layer_names()[layer]);
  }
  EXPECT_TRUE(replayed.count("bn1") || replayed.count("bn2a") || replayed.count("bn2b"))
      << "replayed: " << replayed.size() << " layers";
  ExpectPlannedTrainingMatchesUnplanned(kBlockNet);
}

// The Scale's gradients are final only after the BatchNorm's Backward:
// replication's hook (which starts all-reducing them) sees them there.
TEST(NetFusionTest, TheBackwardHookSeesAnAbsorbedLayerAfterItsAbsorber) {
  NetParameter param = ParseText<NetParameter>(TripleNet(true, "bias_term: true"));
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

TEST(NetFusionTest, OnlyInPlaceLayersThatFitAreAbsorbed) {
  const std::vector<std::string> triple = {"scale", "relu"};
  const auto absorbed = [](NetParameter param) {
    param.mutable_state()->set_phase(TRAIN);
    return AbsorbedLayers(Net(param, Context()));
  };
  const auto pair = [](bool bn_in_place, const std::string& scale,
                       const std::string& batch_norm = "") {
    return ParseText<NetParameter>(TripleNet(bn_in_place, scale, batch_norm));
  };
  EXPECT_EQ(absorbed(pair(false, "bias_term: true")), triple);
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
  // A ReLU right after a BatchNorm without an affine part: none to recompute
  // its signs from.
  NetParameter no_scale = pair(true, "bias_term: true");
  no_scale.mutable_layer()->DeleteSubrange(3, 1);
  EXPECT_TRUE(absorbed(no_scale).empty());
  // A negative slope stays with the ReLU, which rejects it.
  NetParameter negative = pair(true, "bias_term: true");
  negative.mutable_layer(4)->mutable_relu_param()->set_negative_slope(-0.5f);
  EXPECT_EQ(absorbed(negative), std::vector<std::string>{"scale"});
  // And the net can say no.
  NetParameter refused = pair(true, "bias_term: true");
  refused.set_fuse_layers(false);
  EXPECT_TRUE(absorbed(refused).empty());
}

}  // namespace
}  // namespace demi
