// Recomputation in a net: under a memory_budget the net drops activations
// after forward and recomputes them during backward, training bit for bit
// as it does without, BatchNorm's running statistics and Dropout's masks
// included.
#include <gtest/gtest.h>

#include "demi/net.hpp"
#include "net_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

// conv -> BN -> Scale -> ReLU (in place) -> pool -> conv -> ReLU -> ip ->
// Dropout -> ip -> loss: every kind of replay, a chain and a segment. Apart:
// fused, the BatchNorm keeps only x_hat and this net has nothing to drop
// (test_net_fusion.cpp replays a fused BatchNorm).
const char* kNet = R"(
  name: "recompute"
  fuse_layers: false
  layer { name: "data" type: "DummyData" top: "x" top: "label"
          dummy_data_param { shape { dim: 4 dim: 3 dim: 12 dim: 12 } shape { dim: 4 }
                             data_filler { type: "gaussian" }
                             data_filler { type: "constant" value: 1 } } }
  layer { name: "conv1" type: "Convolution" bottom: "x" top: "c1"
          convolution_param { num_output: 8 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "c1" top: "c1" }
  layer { name: "scale1" type: "Scale" bottom: "c1" top: "c1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "c1" top: "c1" }
  layer { name: "pool1" type: "Pooling" bottom: "c1" top: "p1"
          pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: "conv2" type: "Convolution" bottom: "p1" top: "c2"
          convolution_param { num_output: 8 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "relu2" type: "ReLU" bottom: "c2" top: "c2" }
  layer { name: "ip1" type: "InnerProduct" bottom: "c2" top: "h"
          inner_product_param { num_output: 32 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "drop" type: "Dropout" bottom: "h" top: "h" dropout_param { dropout_ratio: 0.3 } }
  layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "y"
          inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "y" bottom: "label" top: "loss" }
)";

std::unique_ptr<Net> MakeNet(size_t budget) {
  NetParameter param = ParseText<NetParameter>(kNet);
  param.mutable_state()->set_phase(TRAIN);
  param.set_memory_budget(budget);
  return std::make_unique<Net>(param, Context());
}

std::vector<float> Train(Net* net, int steps) {
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    net->ClearParamDiffs();
    losses.push_back(net->ForwardBackward());
    for (Blob* param : net->learnable_params()) param->scale_diff(0.05f);
    net->Update();
  }
  return losses;
}

TEST(NetRecomputeTest, SmallestBudgetTrainsBitIdenticallyWithRunningStatistics) {
  auto stored = MakeNet(0);
  const size_t smallest = SmallestRecomputedArena(ParseText<NetParameter>(kNet));
  ASSERT_LT(smallest, stored->memory_plan().arena_bytes);
  auto recomputed = MakeNet(smallest);
  const Recomputation& r = recomputed->recomputation();
  EXPECT_TRUE(r.fits);
  EXPECT_FALSE(r.dropped.empty());
  EXPECT_GT(r.replayed_layers, 0);
  EXPECT_GT(r.extra_flops, 0);
  EXPECT_LE(recomputed->memory_plan().arena_bytes, smallest);
  EXPECT_EQ(r.unplanned_arena_bytes, stored->memory_plan().arena_bytes);
  // Every kind of layer above runs again somewhere.
  std::set<std::string> replayed;
  for (const auto& layers : r.replays) {
    for (int layer : layers) replayed.insert(recomputed->layers()[layer]->type());
  }
  EXPECT_GE(replayed.size(), 4u);

  EXPECT_EQ(Train(recomputed.get(), 4), Train(stored.get(), 4));
  // params() holds BatchNorm's running sums too: replays must not add to them.
  for (size_t p = 0; p < stored->params().size(); ++p) {
    EXPECT_EQ(DataOf(*recomputed->params()[p]), DataOf(*stored->params()[p]))
        << stored->param_display_names()[p];
  }
}

TEST(NetRecomputeTest, AmpleBudgetPlansExactlyAsNoBudget) {
  auto stored = MakeNet(0);
  auto ample = MakeNet(stored->memory_plan().arena_bytes);
  EXPECT_TRUE(ample->recomputation().dropped.empty());
  EXPECT_EQ(ample->memory_plan().arena_bytes, stored->memory_plan().arena_bytes);
  EXPECT_EQ(ample->memory_plan().offsets, stored->memory_plan().offsets);
}

TEST(NetRecomputeTest, UnreachableBudgetIsAnErrorWithTheSmallestFigure) {
  const size_t smallest = SmallestRecomputedArena(ParseText<NetParameter>(kNet));
  try {
    MakeNet(smallest - 64);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("memory_budget"), std::string::npos) << message;
    EXPECT_NE(message.find("cannot be met"), std::string::npos) << message;
    const std::string figure = StrCat(smallest / (1024.0 * 1024.0), " MiB at the least");
    EXPECT_NE(message.find(figure), std::string::npos) << message << " vs " << figure;
  }
}

TEST(NetRecomputeTest, BudgetNeedsTheArena) {
  NetParameter param = ParseText<NetParameter>(kNet);
  param.mutable_state()->set_phase(TRAIN);
  param.set_memory_budget(1 << 20);
  param.set_memory_optimization(SLOTS);
  EXPECT_THROW(Net net(param, Context()), Error);
}

TEST(NetRecomputeTest, TestNetsIgnoreTheBudget) {
  NetParameter param = ParseText<NetParameter>(kNet);
  param.mutable_state()->set_phase(TEST);
  param.set_memory_budget(64);
  Net net(param, Context());
  EXPECT_TRUE(net.recomputation().dropped.empty());
}

}  // namespace
}  // namespace demi
