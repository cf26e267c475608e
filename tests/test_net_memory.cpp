// A planned net must compute exactly what the unplanned one does, in less
// memory.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

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

TEST(NetMemoryTest, KeepBlobStarKeepsEveryBlob) {
  std::string text = std::string(kMlp) + R"( keep_blob: "*" )";
  auto none = MakeNet(kMlp, NONE, TRAIN);
  auto kept = MakeNet(text, ARENA, TRAIN);
  none->ForwardBackward();
  kept->ForwardBackward();
  ASSERT_EQ(kept->blobs().size(), none->blobs().size());
  for (size_t b = 0; b < kept->blobs().size(); ++b) {
    const std::string& name = kept->blob_names()[b];
    EXPECT_FALSE(kept->blobs()[b]->data()->is_view()) << name;
    EXPECT_FALSE(kept->blobs()[b]->diff()->is_view()) << name;
    EXPECT_EQ(DataOf(*kept->blobs()[b]), DataOf(*none->blobs()[b])) << name;
  }
  // Nothing but the layers' own buffers is left to the plan.
  auto planned = MakeNet(kMlp, ARENA, TRAIN);
  EXPECT_LT(kept->memory_plan().naive_bytes, planned->memory_plan().naive_bytes);
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
  EXPECT_EQ(net->arena()->capacity(), large);                // never shrinks
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

namespace demi {
namespace {

// ResNet's conv -> BatchNorm -> Scale chain, in place. A smooth Sigmoid
// stands in for the ReLU so finite differences do not straddle kinks.
const char* kBatchNormBlock = R"(
  force_backward: true
  layer { name: "in" type: "Input" top: "x" top: "target"
          input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } shape { dim: 2 dim: 3 } } }
  layer { name: "conv" type: "Convolution" bottom: "x" top: "c"
          convolution_param { num_output: 4 kernel_size: 3 pad: 1 bias_term: false
                              weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "bn" type: "BatchNorm" bottom: "c" top: "c" }
  layer { name: "scale" type: "Scale" bottom: "c" top: "c"
          scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 }
                        bias_filler { type: "uniform" min: -0.2 max: 0.2 } } }
  layer { name: "sigmoid" type: "Sigmoid" bottom: "c" top: "c" }
  layer { name: "ip" type: "InnerProduct" bottom: "c" top: "y"
          inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "y" bottom: "target" top: "loss" }
)";

TEST(LeanBuffersTest, InPlaceScaleReadsBatchNormsSavedOutput) {
  // The pair apart: fused, the BatchNorm keeps x_hat and the Scale nothing.
  auto fused = MakeNet(kBatchNormBlock, ARENA, TRAIN);
  EXPECT_EQ(fused->layer_by_name("bn")->buffers().size(), 3u);
  EXPECT_TRUE(fused->layer_by_name("scale")->buffers().empty());
  auto net = MakeNet(std::string("fuse_layers: false ") + kBatchNormBlock, ARENA, TRAIN);
  const Layer& bn = *net->layer_by_name("bn");
  const Layer& scale = *net->layer_by_name("scale");
  ASSERT_EQ(bn.buffers().size(), 3u);  // mean (scratch), inv_std, x_norm
  const Blob* x_norm = nullptr;
  for (const LayerBuffer& buffer : bn.buffers()) {
    if (buffer.name == "x_norm") x_norm = buffer.blob;
  }
  ASSERT_NE(x_norm, nullptr);
  ASSERT_EQ(scale.buffers().size(), 1u);
  EXPECT_EQ(scale.buffers()[0].blob->data(), x_norm->data());  // one memory, not two copies
  EXPECT_FALSE(scale.BackwardReadsBottomData(0));
  EXPECT_FALSE(bn.BackwardReadsTopData(0));
}

TEST(LeanBuffersTest, SharedBufferGivesTheTrueGradient) {
  // Finite differences through the whole block, input and conv weights.
  auto net = MakeNet(kBatchNormBlock, ARENA, TRAIN);
  FillGaussian(net->input_blobs()[0], 21);
  FillGaussian(net->input_blobs()[1], 22);
  net->ClearParamDiffs();
  net->ForwardBackward();
  Blob* x = net->input_blobs()[0];
  Blob* w = net->layer_by_name("conv")->blobs()[0].get();
  for (Blob* blob : {x, w}) {
    const std::vector<float> analytic = DiffOf(*blob);
    for (int64_t i = 0; i < blob->count(); i += 5) {
      const float original = blob->cpu_data()[i];
      const float h = 1e-2f;
      blob->mutable_cpu_data()[i] = original + h;
      const double plus = net->Forward();
      blob->mutable_cpu_data()[i] = original - h;
      const double minus = net->Forward();
      blob->mutable_cpu_data()[i] = original;
      const double numeric = (plus - minus) / (2 * h);
      EXPECT_NEAR(analytic[i], numeric, 2e-3 * std::max(1.0, std::fabs(numeric)))
          << "element " << i;
    }
  }
}

TEST(LeanBuffersTest, PlannedBlockTrainsBitIdenticalToNone) {
  auto none = MakeNet(kBatchNormBlock, NONE, TRAIN);
  auto planned = MakeNet(kBatchNormBlock, ARENA, TRAIN);
  for (Net* net : {none.get(), planned.get()}) {
    FillGaussian(net->input_blobs()[0], 31);
    FillGaussian(net->input_blobs()[1], 32);
  }
  EXPECT_EQ(Train(planned.get(), 4), Train(none.get(), 4));
  for (size_t p = 0; p < none->params().size(); ++p) {
    EXPECT_EQ(DataOf(*planned->params()[p]), DataOf(*none->params()[p])) << "param " << p;
  }
}

}  // namespace
}  // namespace demi

namespace demi {
namespace {

TEST(LeanBuffersTest, ScaleKeepsItsOwnCopyWhenBatchNormRunsNoBackward) {
  // BatchNorm straight on the input has nothing to backpropagate into, so,
  // apart, it saves nothing; the learned Scale after it must keep its own
  // input copy. Fused, the BatchNorm's Backward runs for the Scale's
  // gradients alone.
  const std::string apart = "fuse_layers: false";
  const std::string text = R"(
    layer { name: "in" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 4 dim: 3 dim: 2 dim: 2 } data_filler { type: "gaussian" } } }
    layer { name: "bn" type: "BatchNorm" bottom: "x" top: "x" }
    layer { name: "scale" type: "Scale" bottom: "x" top: "x" scale_param { bias_term: true } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" loss_weight: 1
            inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
  )";
  // Reference: the same net with Scale out of place (no copies involved).
  std::string out_of_place(text);
  out_of_place.replace(out_of_place.find(R"(top: "x" scale_param)"), 8, R"(top: "s")");
  out_of_place.replace(out_of_place.find(R"(bottom: "x" top: "y")"), 11, R"(bottom: "s")");
  auto reference = MakeNet(out_of_place, NONE, TRAIN);
  const std::vector<float> reference_losses = Train(reference.get(), 3);
  auto planned = MakeNet(apart + text, ARENA, TRAIN);
  EXPECT_FALSE(planned->layer_by_name("bn")->runs_backward());
  EXPECT_TRUE(planned->layer_by_name("scale")->runs_backward());
  EXPECT_EQ(Train(planned.get(), 3), reference_losses);
  for (size_t p = 0; p < reference->params().size(); ++p) {
    EXPECT_EQ(DataOf(*planned->params()[p]), DataOf(*reference->params()[p])) << "param " << p;
  }
  // Fused: the Scale's gradients summed in double over the batch, not in
  // float image by image as Scale's own loops do: equal within rounding.
  auto fused = MakeNet(text, ARENA, TRAIN);
  EXPECT_TRUE(fused->layer_by_name("scale")->absorbed());
  EXPECT_TRUE(fused->layer_by_name("bn")->runs_backward());
  ExpectNear(Train(fused.get(), 3), reference_losses, 1e-5f);
  for (size_t p = 0; p < reference->params().size(); ++p) {
    ExpectNear(DataOf(*fused->params()[p]), DataOf(*reference->params()[p]), 1e-5f);
  }
}

}  // namespace
}  // namespace demi
