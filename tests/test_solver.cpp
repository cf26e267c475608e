// The solver's loop: building train and test nets, testing at intervals,
// loss smoothing, seeds, the non-finite loss check and training with every
// update rule.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "demi/util/io.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

// A student learns a fixed random teacher (lr_mult 0) on fresh gaussian
// inputs, under a Euclidean loss.
const char* kTeacherNet = R"(
  name: "teacher"
  layer { name: "data" type: "DummyData" top: "x"
          dummy_data_param { shape { dim: 16 dim: 4 } data_filler { type: "gaussian" } } }
  layer { name: "teacher" type: "InnerProduct" bottom: "x" top: "target"
          param { lr_mult: 0 decay_mult: 0 } param { lr_mult: 0 decay_mult: 0 }
          inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 1 }
                                bias_filler { type: "constant" value: 0.5 } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
          inner_product_param { num_output: 16 weight_filler { type: "xavier" } } }
  layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
  layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "pred"
          inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "pred" bottom: "target" top: "loss" }
)";

std::string WithNet(const std::string& net, const std::string& solver) {
  return StrCat("net_param {", net, "}\n", solver);
}

TEST(SolverTest, TrainsWithEveryTypeAndTheLossFalls) {
  const std::vector<std::pair<std::string, std::string>> settings = {
      {"SGD", "base_lr: 0.02 momentum: 0.9"},
      {"Nesterov", "base_lr: 0.02 momentum: 0.9"},
      {"AdaGrad", "base_lr: 0.1"},
      {"RMSProp", "base_lr: 0.01 rms_decay: 0.95"},
      {"AdaDelta", "base_lr: 1 momentum: 0.95 delta: 1e-6"},
      {"Adam", "base_lr: 0.01 momentum: 0.9 momentum2: 0.999"}};
  for (const auto& [type, hyper] : settings) {
    auto solver = MakeSolver(WithNet(kTeacherNet, StrCat("type: \"", type, "\" ", hyper, R"(
      lr_policy: "fixed" weight_decay: 0.0001 average_loss: 20 random_seed: 3
      snapshot_after_train: false)")));
    solver->Step(20);
    const float initial = solver->smoothed_loss();
    solver->Step(380);
    const float final_loss = solver->smoothed_loss();
    EXPECT_LT(final_loss, 0.1f * initial) << type << ": loss " << initial << " -> " << final_loss;
    EXPECT_EQ(solver->iter(), 400);
  }
}

TEST(SolverTest, TrainNetSourcesAreExclusive) {
  const std::string net = StrCat("{", kTeacherNet, "}");
  EXPECT_EQ(
      MakeSolver("train_net_param " + net + R"( lr_policy: "fixed" snapshot_after_train: false)")
          ->net()
          .name(),
      "teacher");
  ExpectErrorContaining(
      [&] {
        MakeSolver("net_param " + net + " train_net_param " + net + R"( lr_policy: "fixed")");
      },
      {"2 train nets", "net, net_param, train_net, train_net_param"});
  ExpectErrorContaining([] { MakeSolver(R"(lr_policy: "fixed")"); },
                        {"must give a train net", "net_param"});
  ExpectErrorContaining([] { MakeSolver(R"(net: "/no/such/net.prototxt" lr_policy: "fixed")"); },
                        {"/no/such/net.prototxt"});
}

TEST(SolverTest, NetFileGivesTrainAndTestNets) {
  ScratchDir dir;
  WriteFileAtomically(dir.file("net.prototxt"), kTeacherNet);
  auto solver = MakeSolver(StrCat("net: \"", dir.file("net.prototxt"), R"("
    test_iter: 1 test_interval: 10 lr_policy: "fixed" snapshot_after_train: false)"));
  EXPECT_EQ(solver->net().phase(), TRAIN);
  ASSERT_EQ(solver->test_nets().size(), 1u);
  EXPECT_EQ(solver->test_nets()[0]->phase(), TEST);
}

TEST(SolverTest, KeepBlobReachesTrainAndTestNets) {
  auto solver = MakeSolver(WithNet(kTeacherNet, R"(
    keep_blob: "*" test_iter: 1 test_interval: 10 lr_policy: "fixed")"));
  ASSERT_EQ(solver->test_nets().size(), 1u);
  for (const Net* net : {&solver->net(), solver->test_nets()[0].get()}) {
    for (size_t b = 0; b < net->blobs().size(); ++b) {
      EXPECT_FALSE(net->blobs()[b]->data()->is_view()) << net->blob_names()[b];
    }
  }
  // Without it the hidden activation lives in the arena.
  auto planned = MakeSolver(WithNet(kTeacherNet, R"(lr_policy: "fixed")"));
  EXPECT_TRUE(planned->net().blob_by_name("h")->data()->is_view());
}

// Layers that only some states admit, to see which state each net got.
const char* kStagedNet = R"(
  layer { name: "data" type: "DummyData" top: "x"
          dummy_data_param { shape { dim: 2 dim: 3 } data_filler { type: "uniform" } } }
  layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
          inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
  layer { name: "train_only" type: "ReLU" bottom: "y" top: "t" include { phase: TRAIN } }
  layer { name: "stage_a" type: "ReLU" bottom: "y" top: "a" include { stage: "a" } }
  layer { name: "stage_b" type: "ReLU" bottom: "y" top: "b" include { stage: "b" } }
  layer { name: "level_2" type: "ReLU" bottom: "y" top: "l" include { min_level: 2 } }
)";

TEST(SolverTest, SeveralTestNetsWithStatesShareTrainParams) {
  auto solver = MakeSolver(WithNet(kStagedNet, R"(
    train_state { level: 2 }
    test_iter: 1 test_iter: 2 test_interval: 5
    test_state { stage: "a" } test_state { stage: "b" }
    lr_policy: "fixed")"));
  const Net& train = solver->net();
  EXPECT_TRUE(train.has_layer("train_only"));
  EXPECT_TRUE(train.has_layer("level_2"));
  EXPECT_FALSE(train.has_layer("stage_a"));
  ASSERT_EQ(solver->test_nets().size(), 2u);
  const Net& test_a = *solver->test_nets()[0];
  const Net& test_b = *solver->test_nets()[1];
  EXPECT_TRUE(test_a.has_layer("stage_a"));
  EXPECT_FALSE(test_a.has_layer("stage_b"));
  EXPECT_FALSE(test_a.has_layer("train_only"));
  EXPECT_FALSE(test_a.has_layer("level_2"));
  EXPECT_TRUE(test_b.has_layer("stage_b"));
  for (const Net* test : {&test_a, &test_b}) {
    EXPECT_EQ(test->layer_by_name("ip")->blobs()[0]->cpu_data(),
              train.layer_by_name("ip")->blobs()[0]->cpu_data());
  }
  // A test net's data layer must not replay the train net's draws.
  EXPECT_NE(*test_a.layers()[0]->rng(), *train.layers()[0]->rng());
}

TEST(SolverTest, SpecificTestNetsComeBeforeGenericOnes) {
  ScratchDir dir;
  WriteFileAtomically(dir.file("test.prototxt"), StrCat(R"(name: "from_file" )", kStagedNet));
  auto solver = MakeSolver(StrCat(R"(
    net_param { name: "generic" )",
                                  kStagedNet, R"( }
    test_net_param { name: "from_param" )",
                                  kStagedNet, R"( }
    test_net: ")",
                                  dir.file("test.prototxt"), R"("
    test_iter: 1 test_iter: 1 test_iter: 1 test_interval: 5 lr_policy: "fixed"
    snapshot_after_train: false)"));
  ASSERT_EQ(solver->test_nets().size(), 3u);
  EXPECT_EQ(solver->test_nets()[0]->name(), "from_param");
  EXPECT_EQ(solver->test_nets()[1]->name(), "from_file");
  EXPECT_EQ(solver->test_nets()[2]->name(), "generic");
}

TEST(SolverTest, TestNetConfigurationErrors) {
  ExpectErrorContaining(
      [] {
        MakeSolver(StrCat("train_net_param {", kStagedNet, "} test_net_param {", kStagedNet,
                          R"(} lr_policy: "fixed" test_interval: 5)"));
      },
      {"1 test nets but 0 test_iter values"});
  ExpectErrorContaining(
      [] {
        MakeSolver(WithNet(kStagedNet, R"(test_iter: 3 test_interval: -2 lr_policy: "fixed")"));
      },
      {"test_interval is -2"});
  ExpectErrorContaining(
      [] {
        MakeSolver(WithNet(kStagedNet, R"(test_iter: 3 test_interval: 2
          test_state { stage: "a" } test_state { stage: "b" } lr_policy: "fixed")"));
      },
      {"1 test nets but 2 test_state values"});
}

TEST(SolverTest, TestAveragesOutputsOverTestIter) {
  auto solver = MakeSolver(WithNet(kStagedNet, R"(test_iter: 3 test_interval: 5
                                                  lr_policy: "fixed")"));
  Net& test = *solver->test_nets()[0];
  const RandomEngine start = *test.layers()[0]->rng();
  std::vector<double> sums;
  for (int i = 0; i < 3; ++i) {
    test.Forward();
    std::vector<float> outputs;
    for (const Blob* blob : test.output_blobs()) {
      outputs.insert(outputs.end(), blob->cpu_data(), blob->cpu_data() + blob->count());
    }
    sums.resize(outputs.size(), 0.0);
    for (size_t k = 0; k < outputs.size(); ++k) sums[k] += outputs[k];
  }
  *test.layers()[0]->rng() = start;
  const std::vector<float> means = solver->Test(0);
  ASSERT_EQ(means.size(), sums.size());
  ASSERT_GT(means.size(), 0u);
  for (size_t k = 0; k < means.size(); ++k) EXPECT_NEAR(means[k], sums[k] / 3, 1e-6);
}

/// How many test batches ran: the test net's data layer draws 6 uniforms a
/// batch, one engine step each.
int TestBatchesRun(const RandomEngine& before, RandomEngine after) {
  RandomEngine probe = before;
  for (int batches = 0; batches <= 100; ++batches) {
    if (probe == after) return batches;
    probe.discard(6);
  }
  return -1;
}

TEST(SolverTest, TestsAtIntervalsAndOptionallyAtTheStart) {
  for (bool initialization : {true, false}) {
    auto solver = MakeSolver(WithNet(kStagedNet, StrCat(R"(test_iter: 2 test_interval: 2
      lr_policy: "fixed" base_lr: 0.01 test_initialization: )",
                                                        initialization ? "true" : "false")));
    const RandomEngine before = *solver->test_nets()[0]->layers()[0]->rng();
    solver->Step(5);  // tests at iterations 0 (if asked), 2 and 4
    EXPECT_EQ(TestBatchesRun(before, *solver->test_nets()[0]->layers()[0]->rng()),
              initialization ? 6 : 4);
  }
}

TEST(SolverTest, TestIntervalZeroBuildsTheTestNetsAndNeverRunsThem) {
  // Caffe's default test_interval: pycaffe code may run solver.test_nets itself.
  auto solver = MakeSolver(WithNet(kStagedNet, R"(test_iter: 2 lr_policy: "fixed" base_lr: 0.01
                                                  test_initialization: true)"));
  ASSERT_EQ(solver->test_nets().size(), 1u);
  const RandomEngine before = *solver->test_nets()[0]->layers()[0]->rng();
  solver->Step(4);
  EXPECT_EQ(TestBatchesRun(before, *solver->test_nets()[0]->layers()[0]->rng()), 0);
}

// loss = w + b on a constant input: with plain SGD at lr 0.1 the loss falls
// by exactly 0.2 an iteration from 1.5.
const char* kCountdown = R"(
  net_param {
    layer { name: "data" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 1 dim: 1 } data_filler { type: "constant" value: 1 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" loss_weight: 1
            inner_product_param { num_output: 1 weight_filler { type: "constant" value: 1 }
                                  bias_filler { type: "constant" value: 0.5 } } }
  }
  type: "SGD" lr_policy: "fixed" base_lr: 0.1 snapshot_after_train: false
)";

TEST(SolverTest, AverageLossSmoothsOverTheLastIterations) {
  auto solver = MakeSolver(std::string(kCountdown) + "average_loss: 3");
  solver->Step(2);
  EXPECT_NEAR(solver->smoothed_loss(), (1.5 + 1.3) / 2, 1e-5);
  solver->Step(5);  // losses 1.1, 0.9, 0.7, 0.5, 0.3
  EXPECT_NEAR(solver->smoothed_loss(), (0.7 + 0.5 + 0.3) / 3, 1e-5);
}

TEST(SolverTest, FixedSeedGivesIdenticalRuns) {
  auto run = [](int seed) {
    auto solver = MakeSolver(WithNet(kTeacherNet, StrCat(R"(type: "Adam" lr_policy: "fixed"
      base_lr: 0.01 snapshot_after_train: false random_seed: )",
                                                         seed)));
    const std::vector<float> initial = AllParams(solver->net());
    solver->Step(3);
    return std::make_pair(initial, AllParams(solver->net()));
  };
  const auto first = run(42);
  const auto second = run(42);
  EXPECT_EQ(first.first, second.first);
  EXPECT_EQ(first.second, second.second);
  EXPECT_NE(first.first, run(43).first);
  EXPECT_NE(run(-1).first, run(-1).first);  // -1: a seed from the clock
}

TEST(SolverTest, InfiniteLossStopsNamingTheIteration) {
  // lr 1e38: w and b fall by 1e38 an iteration; at iteration 2 w + b
  // overflows to -inf.
  SolverParameter param = ParseText<SolverParameter>(kCountdown);
  param.set_base_lr(1e38f);
  auto solver = SolverRegistry::Create(param);
  ExpectErrorContaining([&] { solver->Step(10); },
                        {"loss is infinite at iteration 2", "set debug_info: true"});
  EXPECT_EQ(solver->iter(), 2);
}

TEST(SolverTest, LossesReadInBatchesGiveTheSameSmoothedLossAndParams) {
  // As a GPU run reads them (Solver::kGpuPendingLosses): every pending loss
  // read back later, in order, into the same smoothing.
  auto run = [](int pending) {
    auto solver = MakeSolver(WithNet(kTeacherNet, R"(type: "Adam" lr_policy: "fixed"
      base_lr: 0.01 average_loss: 5 random_seed: 7 snapshot_after_train: false)"));
    solver->set_pending_losses(pending);
    std::vector<float> smoothed;
    for (int iters : {23, 4, 1}) {
      solver->Step(iters);
      smoothed.push_back(solver->smoothed_loss());
    }
    return std::make_pair(smoothed, AllParams(solver->net()));
  };
  const auto each = run(1);
  const auto batched = run(7);
  EXPECT_EQ(each.first, batched.first);
  EXPECT_EQ(each.second, batched.second);
  EXPECT_GT(each.first[0], 0.0f);
}

TEST(SolverTest, PendingLossesIsASolverField) {
  // As set_pending_losses(5) below: the infinite loss of iteration 2 is read
  // before iteration 4's update. 0 is refused.
  SolverParameter param = ParseText<SolverParameter>(kCountdown);
  param.set_base_lr(1e38f);
  param.set_pending_losses(5);
  auto solver = SolverRegistry::Create(param);
  ExpectErrorContaining([&] { solver->Step(10); }, {"loss is infinite at iteration 2"});
  EXPECT_EQ(solver->iter(), 4);
  // debug_info reads each loss at once, to name the layer of its iteration.
  param.set_debug_info(true);
  auto debug = SolverRegistry::Create(param);
  ExpectErrorContaining([&] { debug->Step(10); }, {"loss is infinite at iteration 2"});
  EXPECT_EQ(debug->iter(), 2);
  param.set_pending_losses(0);
  ExpectErrorContaining([&] { SolverRegistry::Create(param); },
                        {"pending_losses must be at least 1, got 0"});
}

TEST(SolverTest, AnInfiniteLossReadLateStillNamesItsIteration) {
  // As InfiniteLossStopsNamingTheIteration, with five losses pending: read
  // before iteration 4's update, they name iteration 2.
  SolverParameter param = ParseText<SolverParameter>(kCountdown);
  param.set_base_lr(1e38f);
  auto solver = SolverRegistry::Create(param);
  solver->set_pending_losses(5);
  ExpectErrorContaining([&] { solver->Step(10); }, {"loss is infinite at iteration 2"});
  EXPECT_EQ(solver->iter(), 4);
  // None is left pending: the capacity may change, and the next Step reads its own.
  solver->set_pending_losses(1);
  ExpectErrorContaining([&] { solver->Step(1); }, {"loss is"});
}

TEST(PendingLossesTest, KeepTheirIterationsInOrderUntilTaken) {
  PendingLosses pending(Device::kCPU, 3);
  EXPECT_TRUE(pending.empty());
  *pending.Add(5) += 1.5f;
  *pending.Add(6) += 2.5f;
  pending.DropLast();
  float* loss = pending.Add(7);
  EXPECT_EQ(*loss, 0.0f);  // zeroed for the forward pass to add into
  *loss += 3.0f;
  *pending.Add(8) += 4.0f;
  EXPECT_TRUE(pending.full());
  ExpectErrorContaining([&] { pending.Add(9); }, {"already 3 losses pending"});
  const std::vector<PendingLosses::Loss> taken = pending.Take();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0].iteration, 5);
  EXPECT_EQ(taken[0].value, 1.5f);
  EXPECT_EQ(taken[1].iteration, 7);
  EXPECT_EQ(taken[1].value, 3.0f);
  EXPECT_EQ(taken[2].iteration, 8);
  EXPECT_EQ(taken[2].value, 4.0f);
  EXPECT_TRUE(pending.empty());
  EXPECT_EQ(*pending.Add(9), 0.0f);
  ExpectErrorContaining([] { PendingLosses none(Device::kCPU, 0); }, {"at least one"});
}

TEST(SolverTest, NaNLossWithDebugInfoNamesTheFirstLayer) {
  // ip1's infinite weights make h infinite; ip2's zero weights turn that
  // into 0 * inf = NaN.
  const std::string text = R"(
    net_param {
      layer { name: "data" type: "DummyData" top: "x"
              dummy_data_param { shape { dim: 2 dim: 3 }
                                 data_filler { type: "constant" value: 1 } } }
      layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
              inner_product_param { num_output: 2 weight_filler { type: "constant" value: inf } } }
      layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
      layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "y" loss_weight: 1
              inner_product_param { num_output: 1 } }
    }
    lr_policy: "fixed" snapshot_after_train: false
  )";
  ExpectErrorContaining([&] { MakeSolver(text + "debug_info: true")->Step(1); },
                        {"loss is NaN at iteration 0", "top 'h' of layer 'ip1' (InnerProduct)"});
  ExpectErrorContaining([&] { MakeSolver(text)->Step(1); },
                        {"loss is NaN at iteration 0", "set debug_info: true"});
}

TEST(SolverTest, NaNLossInASixteenBitNetNamesTheFirstLayerWhoseTopIsNotFinite) {
  // As above, with h stored in bfloat16 between two convolutions (no ReLU:
  // oneDNN's maps a NaN to 0): the search reads each top in its own type.
  const std::string text = R"(
    net_param {
      layer { name: "data" type: "DummyData" top: "x"
              dummy_data_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 }
                                 data_filler { type: "constant" value: 1 } } }
      layer { name: "conv1" type: "Convolution" bottom: "x" top: "h"
              convolution_param { num_output: 2 kernel_size: 1
                                  weight_filler { type: "constant" value: inf } } }
      layer { name: "conv2" type: "Convolution" bottom: "h" top: "y" loss_weight: 1
              convolution_param { num_output: 1 kernel_size: 1 } }
    }
    lr_policy: "fixed" snapshot_after_train: false precision: BFLOAT16 debug_info: true
  )";
  auto solver = MakeSolver(text);
  // (Any CPU stores it: without AVX-512, BFLOAT16 is a storage type.)
  ASSERT_EQ(solver->net().blob_by_name("h")->storage_type(), BFLOAT16);
  ExpectErrorContaining([&] { solver->Step(1); },
                        {"loss is NaN at iteration 0", "top 'h' of layer 'conv1' (Convolution)"});
}

TEST(SolverTest, SnapshotPrefixChecks) {
  ExpectErrorContaining([] { MakeSolver(std::string(kCountdown) + "snapshot: 5"); },
                        {"snapshot is 5 but snapshot_prefix is not set"});
  ExpectErrorContaining(
      [] { MakeSolver(std::string(kCountdown) + R"(snapshot: 5 snapshot_prefix: "/no/dir/x")"); },
      {"snapshot_prefix '/no/dir/x'", "exists and is writable"});
}

TEST(SolverTest, ReadSolverParamsDefaultsTheSnapshotPrefix) {
  ScratchDir dir;
  const std::string path = dir.file("my_solver.prototxt");
  WriteFileAtomically(path, R"(solver_type: NESTEROV lr_policy: "fixed")");
  SolverParameter param;
  ReadSolverParamsFromTextFile(path, &param);
  EXPECT_EQ(param.snapshot_prefix(), dir.file("my_solver"));
  EXPECT_EQ(param.type(), "Nesterov");
  WriteFileAtomically(path, StrCat(R"(snapshot_prefix: ")", dir.path(), R"(")"));
  ReadSolverParamsFromTextFile(path, &param);
  EXPECT_EQ(param.snapshot_prefix(), dir.file("my_solver"));
  WriteFileAtomically(path, R"(snapshot_prefix: "runs/lenet")");
  ReadSolverParamsFromTextFile(path, &param);
  EXPECT_EQ(param.snapshot_prefix(), "runs/lenet");
  WriteFileAtomically(path, "base_lr: 0.1\nmomentum 0.9\n");
  ExpectErrorContaining([&] { ReadSolverParamsFromTextFile(path, &param); }, {path + ":2:"});
}

}  // namespace
}  // namespace demi
