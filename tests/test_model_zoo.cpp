// Every model of models/ builds, trains and plans: deploy outputs have the
// right shape, parameter counts equal the published figures, and training
// with the ARENA plan, and with recomputation under the smallest memory
// budget it reaches, is bit-identical to the unplanned (NONE) net.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "demi/net.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/upgrade_proto.hpp"
#include "net_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

struct ZooModel {
  std::string name;
  int64_t published_params;         ///< conv/ip weights and biases, Scale's gamma and beta
  std::vector<int64_t> prob_shape;  ///< deploy output at batch 1
  // The train_val runs: small enough to keep the suite quick on two cores.
  int64_t batch = 2;
  int steps = 5;
  /// Whether dropping activations lowers the plan at this batch: not where
  /// the peak falls in the forward pass (CIFAR-10 quick at batch 2 peaks at
  /// conv1 with its im2col columns, before anything could be dropped).
  bool recomputation_helps = true;
};

std::ostream& operator<<(std::ostream& out, const ZooModel& model) { return out << model.name; }

NetParameter LoadModel(const std::string& model, const std::string& file, Phase phase,
                       MemoryOptimization strategy, int64_t batch) {
  NetParameter param;
  ReadNetParamsFromTextFile("models/" + model + "/" + file, &param);
  param.mutable_state()->set_phase(phase);
  param.mutable_state()->add_stage("dummy");
  param.set_memory_optimization(strategy);
  SetBatchSize(&param, batch);
  return param;
}

/// Plain SGD steps; returns every loss.
std::vector<float> Train(Net* net, int steps) {
  std::vector<float> losses;
  for (int i = 0; i < steps; ++i) {
    net->ClearParamDiffs();
    losses.push_back(net->ForwardBackward());
    for (Blob* param : net->learnable_params()) param->scale_diff(1e-3f);
    net->Update();
  }
  return losses;
}

class ModelZooTest : public ::testing::TestWithParam<ZooModel> {};

TEST_P(ModelZooTest, DeployOutputShapeAndPublishedParameterCount) {
  const ZooModel& model = GetParam();
  Net net(LoadModel(model.name, "deploy.prototxt", TEST, ARENA, 1));
  net.Forward();
  EXPECT_EQ(net.blob_by_name("prob")->shape(), model.prob_shape);
  int64_t count = 0;
  for (size_t i = 0; i < net.layers().size(); ++i) {
    // BatchNorm's blobs are running statistics, not learned parameters.
    if (std::string(net.layers()[i]->type()) == "BatchNorm") continue;
    for (const auto& blob : net.layers()[i]->blobs()) count += blob->count();
  }
  EXPECT_EQ(count, model.published_params);
}

TEST_P(ModelZooTest, ArenaAndRecomputedTrainBitIdenticallyToNone) {
  const ZooModel& model = GetParam();
  Net none(LoadModel(model.name, "train_val.prototxt", TRAIN, NONE, model.batch));
  Net arena(LoadModel(model.name, "train_val.prototxt", TRAIN, ARENA, model.batch));
  EXPECT_LT(arena.memory_plan().arena_bytes, none.memory_plan().naive_bytes);
  // ARENA runs in the order the planner chose (prototxt order unless one
  // is better): never a higher bound, never below the floor of all orders.
  const ScheduleChoice& choice = arena.schedule_choice();
  EXPECT_LE(choice.bound, choice.prototxt_bound);
  EXPECT_LE(choice.order_free_bound, choice.bound);
  EXPECT_EQ(arena.memory_plan().lower_bound_bytes, choice.bound);
  const std::vector<float> expected = Train(&none, model.steps);
  for (float loss : expected) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(Train(&arena, model.steps), expected);
  for (size_t p = 0; p < none.params().size(); ++p) {
    ASSERT_EQ(DataOf(*arena.params()[p]), DataOf(*none.params()[p])) << "param " << p;
  }
  // And under the smallest memory_budget recomputation reaches.
  NetParameter budgeted = LoadModel(model.name, "train_val.prototxt", TRAIN, ARENA, model.batch);
  budgeted.set_memory_budget(SmallestRecomputedArena(budgeted));
  Net recomputed(budgeted);
  if (model.recomputation_helps) {
    EXPECT_FALSE(recomputed.recomputation().dropped.empty());
    EXPECT_LT(recomputed.memory_plan().arena_bytes, arena.memory_plan().arena_bytes);
  } else {
    EXPECT_EQ(recomputed.memory_plan().arena_bytes, arena.memory_plan().arena_bytes);
  }
  EXPECT_EQ(Train(&recomputed, model.steps), expected);
  for (size_t p = 0; p < none.params().size(); ++p) {
    ASSERT_EQ(DataOf(*recomputed.params()[p]), DataOf(*none.params()[p])) << "param " << p;
  }
}

TEST_P(ModelZooTest, ArenaTestForwardBitIdenticalToNone) {
  const ZooModel& model = GetParam();
  Net none(LoadModel(model.name, "train_val.prototxt", TEST, NONE, model.batch));
  Net arena(LoadModel(model.name, "train_val.prototxt", TEST, ARENA, model.batch));
  none.Forward();
  arena.Forward();
  ASSERT_EQ(none.output_blobs().size(), arena.output_blobs().size());
  // Compared bit by bit: BatchNorm nets before any training have no running
  // statistics and give NaN (as Caffe does), which must match too.
  for (size_t o = 0; o < none.output_blobs().size(); ++o) {
    const Blob& expected = *none.output_blobs()[o];
    const Blob& actual = *arena.output_blobs()[o];
    ASSERT_EQ(actual.count(), expected.count());
    EXPECT_EQ(std::memcmp(actual.cpu_data(), expected.cpu_data(), expected.count() * sizeof(float)),
              0)
        << none.blob_names()[none.output_blob_indices()[o]];
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ModelZooTest,
                         ::testing::Values(ZooModel{"cifar10_quick", 145578, {1, 10}, 2, 5, false},
                                           ZooModel{"alexnet", 60965224, {1, 1000}},
                                           ZooModel{"caffenet", 60965224, {1, 1000}},
                                           ZooModel{"googlenet", 6998552, {1, 1000}},
                                           ZooModel{"vgg16", 138357544, {1, 1000}},
                                           ZooModel{"resnet50", 25557032, {1, 1000}},
                                           ZooModel{"squeezenet1.1", 1235496, {1, 1000, 1, 1}},
                                           ZooModel{"mobilenet_v1", 4231976, {1, 1000}},
                                           // 121 BN layers over 224 x 224: one image, two
                                           // steps (the second from updated parameters).
                                           ZooModel{"densenet121", 7978856, {1, 1000}, 1, 2}),
                         [](const ::testing::TestParamInfo<ZooModel>& info) {
                           std::string name = info.param.name;
                           for (char& c : name) {
                             if (c == '.') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace demi
