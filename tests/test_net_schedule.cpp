// A net run in the order the planner chose: the same losses and params, bit
// for bit, as in prototxt order and unplanned, on branched nets with
// Dropout, shared params, a shortcut and recomputation.
#include <gtest/gtest.h>

#include <numeric>

#include "demi/memory/liveness.hpp"
#include "demi/memory/schedule_order.hpp"
#include "demi/net.hpp"
#include "net_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

// An inception-like block written with its branches interleaved: convA and
// convB (sharing their weights) both write big maps that only their
// poolings read, so running each pooling right after its convolution
// lowers the forward peak. A third branch ends in Dropout.
const char* kInception = R"(
  name: "inception"
  layer { name: "data" type: "DummyData" top: "x" top: "label"
          dummy_data_param { shape { dim: 2 dim: 3 dim: 16 dim: 16 } shape { dim: 2 }
                             data_filler { type: "gaussian" }
                             data_filler { type: "constant" value: 1 } } }
  layer { name: "stem" type: "Convolution" bottom: "x" top: "s"
          convolution_param { num_output: 4 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "convA" type: "Convolution" bottom: "s" top: "a"
          param { name: "shared_w" } param { name: "shared_b" }
          convolution_param { num_output: 32 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "convB" type: "Convolution" bottom: "s" top: "b"
          param { name: "shared_w" } param { name: "shared_b" }
          convolution_param { num_output: 32 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "convC" type: "Convolution" bottom: "s" top: "c"
          convolution_param { num_output: 32 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "poolA" type: "Pooling" bottom: "a" top: "pa"
          pooling_param { pool: MAX kernel_size: 4 stride: 4 } }
  layer { name: "poolB" type: "Pooling" bottom: "b" top: "pb"
          pooling_param { pool: AVE kernel_size: 4 stride: 4 } }
  layer { name: "poolC" type: "Pooling" bottom: "c" top: "pc"
          pooling_param { pool: MAX kernel_size: 4 stride: 4 } }
  layer { name: "dropC" type: "Dropout" bottom: "pc" top: "pc" dropout_param { dropout_ratio: 0.4 } }
  layer { name: "concat" type: "Concat" bottom: "pa" bottom: "pb" bottom: "pc" top: "cat" }
  layer { name: "drop" type: "Dropout" bottom: "cat" top: "cat" dropout_param { dropout_ratio: 0.2 } }
  layer { name: "ip" type: "InnerProduct" bottom: "cat" top: "y"
          inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "y" bottom: "label" top: "loss" }
)";

// A ResNet-like shortcut whose projection starts first: its big 1x1
// convolution output waits over the whole residual branch (BatchNorm,
// Scale, ReLU in place) unless the pooling that shrinks it runs next.
const char* kShortcut = R"(
  name: "shortcut"
  layer { name: "data" type: "DummyData" top: "x" top: "label"
          dummy_data_param { shape { dim: 2 dim: 4 dim: 12 dim: 12 } shape { dim: 2 }
                             data_filler { type: "gaussian" }
                             data_filler { type: "constant" value: 2 } } }
  layer { name: "proj" type: "Convolution" bottom: "x" top: "p1"
          convolution_param { num_output: 64 kernel_size: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "res_pool" type: "Pooling" bottom: "x" top: "xr"
          pooling_param { pool: AVE kernel_size: 2 stride: 2 } }
  layer { name: "res_conv" type: "Convolution" bottom: "xr" top: "r1"
          convolution_param { num_output: 4 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "res_bn" type: "BatchNorm" bottom: "r1" top: "r1" }
  layer { name: "res_scale" type: "Scale" bottom: "r1" top: "r1" scale_param { bias_term: true } }
  layer { name: "res_relu" type: "ReLU" bottom: "r1" top: "r1" }
  layer { name: "res_conv2" type: "Convolution" bottom: "r1" top: "r"
          convolution_param { num_output: 8 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "proj_pool" type: "Pooling" bottom: "p1" top: "p0"
          pooling_param { pool: AVE kernel_size: 2 stride: 2 } }
  layer { name: "proj_conv" type: "Convolution" bottom: "p0" top: "p"
          convolution_param { num_output: 8 kernel_size: 1
                              weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "sum" type: "Eltwise" bottom: "p" bottom: "r" top: "e" }
  layer { name: "relu" type: "ReLU" bottom: "e" top: "e" }
  layer { name: "pool" type: "Pooling" bottom: "e" top: "g"
          pooling_param { pool: AVE kernel_size: 6 stride: 6 } }
  layer { name: "ip" type: "InnerProduct" bottom: "g" top: "y"
          inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "y" bottom: "label" top: "loss" }
)";

std::unique_ptr<Net> MakeNet(const char* text, MemoryOptimization strategy, ScheduleOrder order,
                             size_t budget = 0) {
  NetParameter param = ParseText<NetParameter>(text);
  param.mutable_state()->set_phase(TRAIN);
  param.set_memory_optimization(strategy);
  param.set_schedule(order);
  param.set_memory_budget(budget);
  return std::make_unique<Net>(param, Context());
}

/// Plain SGD steps; every loss, then every param (running statistics too).
std::vector<float> TrainAndCollect(Net* net, int steps) {
  std::vector<float> values;
  for (int i = 0; i < steps; ++i) {
    net->ClearParamDiffs();
    values.push_back(net->ForwardBackward());
    for (Blob* param : net->learnable_params()) param->scale_diff(0.05f);
    net->Update();
  }
  for (const auto& param : net->params()) {
    values.insert(values.end(), param->cpu_data(), param->cpu_data() + param->count());
  }
  return values;
}

bool IsPrototxtOrder(const std::vector<int>& order) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] != static_cast<int>(i)) return false;
  }
  return true;
}

class NetScheduleTest : public ::testing::TestWithParam<const char*> {};

TEST_P(NetScheduleTest, ChosenOrderLowersTheBoundAndTrainsBitIdentically) {
  auto chosen = MakeNet(GetParam(), ARENA, SEARCH);
  auto prototxt = MakeNet(GetParam(), ARENA, PROTOTXT);
  auto unplanned = MakeNet(GetParam(), NONE, SEARCH);
  const ScheduleChoice& choice = chosen->schedule_choice();
  ASSERT_TRUE(choice.changed()) << "the net should offer a better order";
  EXPECT_FALSE(IsPrototxtOrder(chosen->execution_order()));
  EXPECT_TRUE(IsPrototxtOrder(prototxt->execution_order()));
  EXPECT_TRUE(IsPrototxtOrder(unplanned->execution_order()));  // NONE: nothing to gain
  EXPECT_LT(choice.bound, choice.prototxt_bound);
  EXPECT_EQ(chosen->memory_plan().lower_bound_bytes, choice.bound);
  EXPECT_EQ(prototxt->memory_plan().lower_bound_bytes, choice.prototxt_bound);
  EXPECT_LE(chosen->memory_plan().arena_bytes, prototxt->memory_plan().arena_bytes);
  EXPECT_EQ(chosen->execution_order().front(), 0);  // the data layer first

  const std::vector<float> expected = TrainAndCollect(unplanned.get(), 4);
  EXPECT_EQ(TrainAndCollect(prototxt.get(), 4), expected);
  EXPECT_EQ(TrainAndCollect(chosen.get(), 4), expected);
}

TEST_P(NetScheduleTest, ChosenOrderKeepsDrawsSharedParamsAndLossesInOrder) {
  auto chosen = MakeNet(GetParam(), ARENA, SEARCH);
  const NetSchedule schedule = DescribeSchedule(*chosen, true, {});
  EXPECT_EQ(CheckOrder(ConstrainOrder(schedule.schedule), chosen->execution_order()), "");
  std::vector<int> step_of(chosen->layers().size());
  for (size_t step = 0; step < step_of.size(); ++step) {
    step_of[chosen->execution_order()[step]] = static_cast<int>(step);
  }
  for (const char* before_after : {"data:dropC", "dropC:drop", "convA:convB"}) {
    const std::string pair(before_after);
    const std::string before = pair.substr(0, pair.find(':'));
    const std::string after = pair.substr(pair.find(':') + 1);
    if (!chosen->has_layer(before) || !chosen->has_layer(after)) continue;
    EXPECT_LT(step_of[chosen->layer_index(before)], step_of[chosen->layer_index(after)]) << pair;
  }
}

TEST_P(NetScheduleTest, RecomputationInTheChosenOrderTrainsBitIdentically) {
  NetParameter param = ParseText<NetParameter>(GetParam());
  const size_t smallest = SmallestRecomputedArena(param);
  auto recomputed = MakeNet(GetParam(), ARENA, SEARCH, smallest);
  EXPECT_LE(recomputed->memory_plan().arena_bytes, smallest);
  auto unplanned = MakeNet(GetParam(), NONE, PROTOTXT);
  EXPECT_EQ(TrainAndCollect(recomputed.get(), 3), TrainAndCollect(unplanned.get(), 3));
}

INSTANTIATE_TEST_SUITE_P(Nets, NetScheduleTest, ::testing::Values(kInception, kShortcut));

TEST(NetScheduleTest, PrototxtScheduleRunsAsWritten) {
  NetParameter param = ParseText<NetParameter>(kInception);
  param.mutable_state()->set_phase(TEST);
  param.set_schedule(PROTOTXT);
  Net net(param, Context());
  EXPECT_TRUE(IsPrototxtOrder(net.execution_order()));
  EXPECT_FALSE(net.schedule_choice().changed());
}

}  // namespace
}  // namespace demi
