// The param block: a net's learnable params are views into one data block
// and one diff block, in layer order, shared params once; the solver's
// history follows the same layout; test nets read the train net's block.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "solver_test_util.hpp"

namespace demi {
namespace {

// ip1 and ip2 share their weights ("shared"); ip3 is large enough for the
// threaded passes to split it.
const char* kBlockNet = R"(
  name: "block"
  layer { name: "data" type: "DummyData" top: "x" top: "t"
          dummy_data_param { shape { dim: 4 dim: 16 } shape { dim: 4 dim: 3 }
                             data_filler { type: "gaussian" } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h1"
          param { name: "shared" } param { lr_mult: 2 decay_mult: 0 }
          inner_product_param { num_output: 16 weight_filler { type: "gaussian" std: 0.1 }
                                bias_filler { type: "constant" value: 0.5 } } }
  layer { name: "ip2" type: "InnerProduct" bottom: "h1" top: "h2" param { name: "shared" }
          inner_product_param { num_output: 16 bias_filler { type: "constant" value: -1 } } }
  layer { name: "ip3" type: "InnerProduct" bottom: "h2" top: "h3"
          inner_product_param { num_output: 37 weight_filler { type: "xavier" } } }
  layer { name: "ip4" type: "InnerProduct" bottom: "h3" top: "y"
          inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "y" bottom: "t" top: "loss" }
)";

std::string BlockSolver(const std::string& type) {
  return StrCat("net_param {", kBlockNet, "} type: \"", type, R"(" base_lr: 0.01
    lr_policy: "fixed" momentum: 0.9 weight_decay: 0.001 random_seed: 3
    test_iter: 1 test_interval: 100 test_initialization: false max_iter: 10)");
}

TEST(ParamBlockTest, LearnableParamsAreViewsInLayerOrder) {
  Net net(ParseText<NetParameter>(kBlockNet));
  const auto& params = net.learnable_params();
  ParamBlock& block = net.param_block();
  const auto& segments = block.segments();
  ASSERT_EQ(segments.size(), params.size());
  ASSERT_EQ(params.size(), 7u);  // ip2's weights are ip1's
  const float* data = block.data().cpu();
  const float* diff = block.diff().cpu();
  int64_t end = 0;
  int last_layer = -1;
  for (size_t p = 0; p < params.size(); ++p) {
    SCOPED_TRACE(StrCat("param ", p));
    EXPECT_EQ(segments[p].count, params[p]->count());
    EXPECT_GE(segments[p].offset, end) << "segments overlap or go backwards";
    EXPECT_LT(segments[p].offset - end, 16) << "more than the alignment between params";
    EXPECT_EQ(segments[p].offset % 16, 0) << "a param does not start 64-byte aligned";
    EXPECT_EQ(params[p]->cpu_data(), data + segments[p].offset);
    EXPECT_EQ(params[p]->cpu_diff(), diff + segments[p].offset);
    end = segments[p].offset + segments[p].count;
  }
  // Owners appear in params() in layer order; learnable params follow them.
  size_t learnable = 0;
  for (size_t i = 0; i < net.params().size(); ++i) {
    if (net.param_owners()[i] >= 0) continue;
    EXPECT_EQ(params[learnable++], net.params()[i].get()) << "param " << i;
    const int layer = net.param_layer_indices()[i].first;
    EXPECT_GE(layer, last_layer) << "params not in layer order";
    last_layer = layer;
  }
  EXPECT_LE(end, block.floats());
  EXPECT_LT(block.floats() - end, 16);
}

TEST(ParamBlockTest, BindingKeepsTheFilledValues) {
  Net net(ParseText<NetParameter>(kBlockNet));
  const auto& params = net.learnable_params();
  // ip1's bias was filled with 0.5, ip2's with -1 (both after the binding).
  for (int64_t i = 0; i < params[1]->count(); ++i) EXPECT_EQ(params[1]->cpu_data()[i], 0.5f);
  for (int64_t i = 0; i < params[2]->count(); ++i) EXPECT_EQ(params[2]->cpu_data()[i], -1.0f);
  EXPECT_GT(params[0]->asum_data(), 0.0);
}

TEST(ParamBlockTest, SharedParamsAreOneStorage) {
  Net net(ParseText<NetParameter>(kBlockNet));
  const Blob& ip1_weights = *net.layer_by_name("ip1")->blobs()[0];
  const Blob& ip2_weights = *net.layer_by_name("ip2")->blobs()[0];
  EXPECT_EQ(ip1_weights.cpu_data(), ip2_weights.cpu_data());
  EXPECT_EQ(ip1_weights.cpu_diff(), ip2_weights.cpu_diff());
  EXPECT_EQ(ip1_weights.cpu_data(), net.param_block().data().cpu());
}

TEST(ParamBlockTest, ClearAndUpdateSweepTheBlock) {
  Net net(ParseText<NetParameter>(kBlockNet));
  const auto& params = net.learnable_params();
  std::vector<float> before = AllParams(net);
  for (Blob* param : params) Set(param->count(), 0.25f, param->mutable_cpu_diff());
  net.Update();
  std::vector<float> after = AllParams(net);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i], before[i] - 0.25f) << i;
  net.ClearParamDiffs();
  for (const Blob* param : params) EXPECT_EQ(param->asum_diff(), 0.0);
  // The gaps between params stayed zero through the sweeps.
  const float* data = net.param_block().data().cpu();
  const auto& segments = net.param_block().segments();
  for (size_t p = 0; p + 1 < segments.size(); ++p) {
    for (int64_t i = segments[p].offset + segments[p].count; i < segments[p + 1].offset; ++i) {
      EXPECT_EQ(data[i], 0.0f) << "gap after param " << p;
    }
  }
}

TEST(ParamBlockTest, HistoryFollowsTheParamLayout) {
  auto solver = MakeSolver(BlockSolver("Adam"));
  const Net& net = solver->net();
  const auto& segments = solver->net().param_block().segments();
  const int64_t floats = solver->net().param_block().floats();
  const size_t num_params = net.learnable_params().size();
  ASSERT_EQ(solver->history().size(), 2 * num_params);
  const float* base = solver->history()[0]->cpu_data() - segments[0].offset;
  for (size_t i = 0; i < solver->history().size(); ++i) {
    const int64_t set = static_cast<int64_t>(i / num_params);
    EXPECT_EQ(solver->history()[i]->cpu_data(),
              base + set * floats + segments[i % num_params].offset)
        << "history blob " << i;
  }
}

TEST(ParamBlockTest, TestNetsReadTheTrainNetsBlock) {
  auto solver = MakeSolver(BlockSolver("SGD"));
  ASSERT_EQ(solver->test_nets().size(), 1u);
  Net& test_net = *solver->test_nets()[0];
  const auto& train = solver->net().learnable_params();
  const auto& test = test_net.learnable_params();
  ASSERT_EQ(test.size(), train.size());
  for (size_t p = 0; p < train.size(); ++p) EXPECT_EQ(test[p]->cpu_data(), train[p]->cpu_data());
  // Its own data block is gone: no second copy of the model.
  EXPECT_EQ(test_net.param_block().data().floats(), 0);
  solver->Step(2);
  for (size_t p = 0; p < train.size(); ++p) EXPECT_EQ(test[p]->cpu_data(), train[p]->cpu_data());
  // Without a data block of its own, the test net still updates the params
  // it reads, blob by blob.
  const float before = train[1]->cpu_data()[0];
  for (Blob* param : test) Set(param->count(), 0.5f, param->mutable_cpu_diff());
  test_net.Update();
  EXPECT_EQ(train[1]->cpu_data()[0], before - 0.5f);
}

TEST(ParamBlockTest, AParamThatLeavesTheBlockIsOneClearError) {
  Net net(ParseText<NetParameter>(kBlockNet));
  Blob& bias = *net.learnable_params()[1];
  bias.Reshape({bias.count() * 4});  // past its view: it owns its bytes now
  try {
    net.ClearParamDiffs();
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("left its contiguous block"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace demi
