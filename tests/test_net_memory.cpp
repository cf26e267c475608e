// A planned net must compute exactly what the unplanned one does, in less
// memory.
#include <gtest/gtest.h>

#include "demi/net.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const char* kMlp = R"(
  name: "mlp"
  layer { name: "data" type: "DummyData" top: "x"
          dummy_data_param { shape { dim: 8 dim: 32 } data_filler { type: "gaussian" } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h1"
          inner_product_param { num_output: 64 weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "relu1" type: "ReLU" bottom: "h1" top: "h1" }
  layer { name: "ip2" type: "InnerProduct" bottom: "h1" top: "h2"
          inner_product_param { num_output: 64 weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "relu2" type: "ReLU" bottom: "h2" top: "h2" }
  layer { name: "ip3" type: "InnerProduct" bottom: "h2" top: "h3"
          inner_product_param { num_output: 64 weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "relu3" type: "ReLU" bottom: "h3" top: "h3" }
  layer { name: "skip" type: "InnerProduct" bottom: "h1" top: "s" loss_weight: 0.5
          inner_product_param { num_output: 4 weight_filler { type: "gaussian" std: 0.2 } } }
  layer { name: "head" type: "InnerProduct" bottom: "h3" top: "out" loss_weight: 1
          inner_product_param { num_output: 4 weight_filler { type: "gaussian" std: 0.2 } } }
)";

std::unique_ptr<Net> MakeNet(const std::string& text, MemoryOptimization strategy, Phase phase,
                             std::shared_ptr<Arena> arena = nullptr) {
  NetParameter param = ParseText<NetParameter>(text);
  param.set_memory_optimization(strategy);
  param.mutable_state()->set_phase(phase);
  return std::make_unique<Net>(param, Context(), std::move(arena));
}

/// Trains `steps` plain SGD steps and records every loss.
std::vector<float> Train(Net* net, int steps) {
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    net->ClearParamDiffs();
    losses.push_back(net->ForwardBackward());
    for (Blob* param : net->learnable_params()) param->scale_diff(0.01f);
    net->Update();
  }
  return losses;
}

TEST(NetMemoryTest, ArenaAndSlotsTrainBitIdenticalToNone) {
  auto none = MakeNet(kMlp, NONE, TRAIN);
  std::vector<float> expected = Train(none.get(), 5);
  for (MemoryOptimization strategy : {SLOTS, ARENA}) {
    auto planned = MakeNet(kMlp, strategy, TRAIN);
    EXPECT_EQ(Train(planned.get(), 5), expected) << MemoryOptimization_Name(strategy);
    for (size_t p = 0; p < none->learnable_params().size(); ++p) {
      EXPECT_EQ(DataOf(*planned->learnable_params()[p]), DataOf(*none->learnable_params()[p]));
    }
    for (size_t o = 0; o < none->output_blobs().size(); ++o) {
      EXPECT_EQ(DataOf(*planned->output_blobs()[o]), DataOf(*none->output_blobs()[o]));
    }
  }
}

TEST(NetMemoryTest, PlannedIsSmallerAndWithinTheBounds) {
  auto net = MakeNet(kMlp, ARENA, TRAIN);
  const Plan& plan = net->memory_plan();
  EXPECT_LT(plan.arena_bytes, plan.naive_bytes);
  EXPECT_LE(plan.lower_bound_bytes, plan.arena_bytes);
  EXPECT_EQ(net->arena()->capacity(), plan.arena_bytes);
  auto none = MakeNet(kMlp, NONE, TRAIN);
  EXPECT_EQ(none->memory_plan().naive_bytes, plan.naive_bytes);
  EXPECT_EQ(none->arena()->capacity(), 0u);  // NONE binds nothing
}

TEST(NetMemoryTest, TestPhaseForwardBitIdentical) {
  auto none = MakeNet(kMlp, NONE, TEST);
  auto planned = MakeNet(kMlp, ARENA, TEST);
  EXPECT_EQ(none->Forward(), planned->Forward());
  EXPECT_EQ(DataOf(*none->blob_by_name("out")), DataOf(*planned->blob_by_name("out")));
  // Forward only: no gradients to plan.
  auto train = MakeNet(kMlp, ARENA, TRAIN);
  EXPECT_LT(planned->memory_plan().naive_bytes, train->memory_plan().naive_bytes);
  EXPECT_LE(planned->memory_plan().arena_bytes, train->memory_plan().arena_bytes);
}

TEST(NetMemoryTest, KeepBlobKeepsItsValues) {
  std::string text = std::string(kMlp) + R"( keep_blob: "h2" )";
  auto none = MakeNet(kMlp, NONE, TEST);
  auto planned = MakeNet(text, ARENA, TEST);
  none->Forward();
  planned->Forward();
  EXPECT_EQ(DataOf(*planned->blob_by_name("h2")), DataOf(*none->blob_by_name("h2")));
  EXPECT_FALSE(planned->blob_by_name("h2")->data()->is_view());
}

TEST(NetMemoryTest, ReshapeReplansAndNeverShrinksTheArena) {
  const char* text = R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 4 dim: 16 } } }
    layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
            inner_product_param { num_output: 32 weight_filler { type: "gaussian" } } }
    layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
    layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "y" loss_weight: 1
            inner_product_param { num_output: 8 weight_filler { type: "gaussian" } } }
  )";
  auto net = MakeNet(text, ARENA, TRAIN);
  auto none = MakeNet(text, NONE, TRAIN);
  const size_t small = net->memory_plan().arena_bytes;
  auto run_both = [&](int64_t batch) {
    for (Net* n : {net.get(), none.get()}) {
      n->input_blobs()[0]->Reshape({batch, 16});
      FillGaussian(n->input_blobs()[0], static_cast<uint32_t>(batch));
      n->Reshape();
    }
    EXPECT_EQ(net->ForwardBackward(), none->ForwardBackward()) << "batch " << batch;
    EXPECT_EQ(DataOf(*net->blob_by_name("y")), DataOf(*none->blob_by_name("y")));
  };
  run_both(16);
  const size_t large = net->memory_plan().arena_bytes;
  EXPECT_GT(large, small);
  EXPECT_EQ(net->arena()->capacity(), large);
  const int64_t allocations = net->arena()->host_allocations();
  run_both(2);
  EXPECT_LT(net->memory_plan().arena_bytes, large);
  EXPECT_EQ(net->arena()->capacity(), large);  // never shrinks
  EXPECT_EQ(net->arena()->host_allocations(), allocations);  // and never reallocates downward
  run_both(16);
  EXPECT_EQ(net->arena()->host_allocations(), allocations);
}

TEST(NetMemoryTest, TwoNetsShareOneArena) {
  auto arena = std::make_shared<Arena>();
  auto train = MakeNet(kMlp, ARENA, TRAIN, arena);
  const size_t train_bytes = arena->capacity();
  auto test = MakeNet(kMlp, ARENA, TEST, arena);
  // The test net's peak is below the train net's: it adds nothing.
  EXPECT_EQ(arena->capacity(), train_bytes);
  auto reference = MakeNet(kMlp, NONE, TRAIN);
  auto reference_test = MakeNet(kMlp, NONE, TEST);
  // Interleave: the test net scribbles over the train net's activations in
  // between, which must not change anything the train net computes.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Train(train.get(), 1), Train(reference.get(), 1));
    EXPECT_EQ(test->Forward(), reference_test->Forward());
  }
}

}  // namespace
}  // namespace demi
