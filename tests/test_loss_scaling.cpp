// Loss scaling (loss_scaler.hpp): the scaler's rules on their own; FLOAT
// nets training bit-identically under power-of-two scales; an overflow
// skipping the step and backing the scale off, alike on 1 and 2 replicas;
// resume bit-exact with a dynamic scale.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "demi/loss_scaler.hpp"
#include "demi/parallel/replicas.hpp"
#include "demi/util/threads.hpp"
#include "replication_test_util.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

LossScaler Scaler(const std::string& net_text, const std::string& solver_text = "") {
  return LossScaler(ParseText<NetParameter>(net_text), ParseText<SolverParameter>(solver_text));
}

TEST(LossScalerTest, OffUnlessTheNetAsks) {
  const LossScaler off = Scaler("name: 'n'");
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.scale(), 1.0f);
  const LossScaler fixed = Scaler("global_grad_scale: 128");
  EXPECT_TRUE(fixed.enabled());
  EXPECT_FALSE(fixed.dynamic());
  EXPECT_EQ(fixed.scale(), 128.0f);
  EXPECT_EQ(Scaler("global_grad_scale_adaptive: true").scale(), 65536.0f);
  EXPECT_EQ(Scaler("global_grad_scale_adaptive: true global_grad_scale: 8").scale(), 8.0f);
}

TEST(LossScalerTest, DynamicHalvesOnOverflowAndDoublesAfterCleanSteps) {
  LossScaler scaler = Scaler("global_grad_scale_adaptive: true global_grad_scale: 1024",
                             "loss_scale_growth_interval: 3");
  scaler.Update(false, 0);
  scaler.Update(false, 1);
  EXPECT_EQ(scaler.scale(), 1024.0f);
  EXPECT_EQ(scaler.clean_steps(), 2);
  scaler.Update(true, 2);
  EXPECT_EQ(scaler.scale(), 512.0f);
  EXPECT_EQ(scaler.clean_steps(), 0);
  for (int i = 3; i < 6; ++i) scaler.Update(false, i);
  EXPECT_EQ(scaler.scale(), 1024.0f);
  EXPECT_EQ(scaler.clean_steps(), 0);
}

TEST(LossScalerTest, StaticKeepsItsScaleThroughAnOverflow) {
  LossScaler scaler = Scaler("global_grad_scale: 256");
  scaler.Update(true, 7);
  EXPECT_EQ(scaler.scale(), 256.0f);
  for (int i = 0; i < 5000; ++i) scaler.Update(false, i);
  EXPECT_EQ(scaler.scale(), 256.0f);
}

TEST(LossScalerTest, NeverGrowsPastAFloat) {
  LossScaler scaler = Scaler("global_grad_scale_adaptive: true global_grad_scale: 3e38",
                             "loss_scale_growth_interval: 1");
  scaler.Update(false, 0);
  EXPECT_EQ(scaler.scale(), 3e38f);
}

TEST(LossScalerTest, GradientsNotFiniteAtAnyScaleAreAnError) {
  LossScaler scaler = Scaler("global_grad_scale_adaptive: true");
  ExpectErrorContaining(
      [&] {
        for (int i = 0; i < 100; ++i) scaler.Update(true, i);
      },
      {"not finite even at the loss scale", "debug_info"});
}

TEST(LossScalerTest, ValuesNoRunCanMeanAreNamed) {
  ExpectErrorContaining([] { Scaler("name: 'n' global_grad_scale: -2"); },
                        {"net 'n'", "global_grad_scale", "-2"});
  ExpectErrorContaining([] { Scaler("global_grad_scale: 0"); }, {"global_grad_scale"});
  ExpectErrorContaining(
      [] { Scaler("global_grad_scale_adaptive: true", "loss_scale_growth_interval: 0"); },
      {"loss_scale_growth_interval"});
  ExpectErrorContaining(
      [] { Scaler("global_grad_scale_adaptive: true", "loss_scale_growth_factor: 1"); },
      {"loss_scale_growth_factor"});
  ExpectErrorContaining(
      [] { Scaler("global_grad_scale_adaptive: true", "loss_scale_backoff_factor: 1.5"); },
      {"loss_scale_backoff_factor"});
}

TEST(LossScalerTest, StateRoundTrips) {
  LossScaler scaler = Scaler("global_grad_scale_adaptive: true", "loss_scale_growth_interval: 9");
  scaler.Update(true, 0);
  scaler.Update(false, 1);
  SolverState state;
  scaler.Save(&state);
  EXPECT_EQ(state.loss_scale(), 32768.0f);
  EXPECT_EQ(state.loss_scale_clean_steps(), 1);
  LossScaler resumed = Scaler("global_grad_scale_adaptive: true", "loss_scale_growth_interval: 9");
  resumed.Restore(state, "s.solverstate");
  EXPECT_EQ(resumed.scale(), 32768.0f);
  EXPECT_EQ(resumed.clean_steps(), 1);
  state.set_loss_scale(std::numeric_limits<float>::quiet_NaN());
  ExpectErrorContaining([&] { resumed.Restore(state, "s.solverstate"); },
                        {"s.solverstate", "loss scale"});
}

// A net with BatchNorm, dropout and two losses: every backward kind a scale
// goes through.
const char* kNet = R"(
  name: "scaled"
  layer { name: "data" type: "DummyData" top: "x" top: "y"
          dummy_data_param { shape { dim: 8 dim: 5 } shape { dim: 8 dim: 3 }
                             data_filler { type: "gaussian" } data_filler { type: "uniform" } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
          inner_product_param { num_output: 7 weight_filler { type: "xavier" } } }
  layer { name: "bn" type: "BatchNorm" bottom: "h" top: "h" }
  layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
  layer { name: "drop" type: "Dropout" bottom: "h" top: "h" dropout_param { dropout_ratio: 0.2 } }
  layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "pred"
          inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "pred" bottom: "y" top: "loss" }
  layer { name: "sig" type: "Sigmoid" bottom: "pred" top: "p" }
  layer { name: "loss2" type: "EuclideanLoss" bottom: "p" bottom: "y" top: "loss2"
          loss_weight: 0.5 }
)";

std::string ScaledSolver(const std::string& net_fields, const std::string& prefix, int max_iter,
                         const std::string& extra = "") {
  return StrCat("net_param {", kNet, net_fields, R"(} type: "SGD" momentum: 0.9
    base_lr: 0.05 lr_policy: "fixed" weight_decay: 0.001 random_seed: 3 iter_size: 2
    snapshot_prefix: ")",
                prefix, "\" max_iter: ", max_iter, " ", extra);
}

TEST(LossScalingTest, PowerOfTwoScalesTrainBitIdenticallyToNone) {
  ScratchDir dir;
  auto plain = MakeSolver(ScaledSolver("", dir.file("plain"), 6));
  plain->Step(6);
  auto fixed = MakeSolver(ScaledSolver("global_grad_scale: 1024", dir.file("fixed"), 6));
  fixed->Step(6);
  // Growing every other step: 2^16 to 2^18 within the run.
  auto dynamic = MakeSolver(ScaledSolver("global_grad_scale_adaptive: true", dir.file("dyn"), 6,
                                         "loss_scale_growth_interval: 2"));
  dynamic->Step(6);
  EXPECT_EQ(dynamic->loss_scaler().scale(), 65536.0f * 8);
  // (Training moved the params.)
  EXPECT_NE(AllParams(plain->net()),
            AllParams(MakeSolver(ScaledSolver("", dir.file("untrained"), 6))->net()));
  EXPECT_EQ(AllParams(fixed->net()), AllParams(plain->net()));
  EXPECT_EQ(AllParams(dynamic->net()), AllParams(plain->net()));
  EXPECT_EQ(AllHistory(*dynamic), AllHistory(*plain));
  // The displayed loss is the unscaled one.
  EXPECT_EQ(dynamic->smoothed_loss(), plain->smoothed_loss());
}

// A loss of 121.5 times a scale of 2^127 is past a float: the loss is divided
// by the scale in double, so the run shows the unscaled loss (and skips the
// step whose gradients overflowed) instead of stopping at an infinite loss.
TEST(LossScalingTest, ALossTimesAScalePastAFloatIsShownUnscaled) {
  const char* net = R"(
    layer { name: "data" type: "DummyData" top: "x" top: "y"
            dummy_data_param { shape { dim: 2 dim: 3 } shape { dim: 2 dim: 3 }
                               data_filler { type: "constant" value: 3 }
                               data_filler { type: "constant" value: 0 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "p"
            inner_product_param { num_output: 3 weight_filler { type: "constant" value: 1 } } }
    layer { name: "loss" type: "EuclideanLoss" bottom: "p" bottom: "y" top: "loss" })";
  ScratchDir dir;
  auto solver = [&](const std::string& fields) {
    return MakeSolver(StrCat("net_param {", net, fields, R"(} type: "SGD" base_lr: 0.01
      lr_policy: "fixed" max_iter: 1 snapshot_prefix: ")",
                             dir.file("s"), "\""));
  };
  auto plain = solver("");
  plain->Step(1);
  EXPECT_EQ(plain->smoothed_loss(), 121.5f);                // 6 outputs of 9: 6 x 81 / (2 x 2)
  auto scaled = solver("global_grad_scale: 1.7014118e38");  // 2^127
  ASSERT_EQ(scaled->loss_scaler().scale(), std::ldexp(1.0f, 127));
  scaled->Step(1);
  EXPECT_EQ(scaled->smoothed_loss(), 121.5f);
  EXPECT_EQ(scaled->iter(), 1);
}

/// The weights of the net's InnerProducts (what the update changes; BatchNorm's
/// statistics move in every forward pass, skipped steps included).
std::vector<float> Weights(const Net& net) {
  std::vector<float> values;
  for (const char* name : {"ip1", "ip2"}) {
    for (const auto& blob : net.layer_by_name(name)->blobs()) {
      values.insert(values.end(), blob->cpu_data(), blob->cpu_data() + blob->count());
    }
  }
  return values;
}

/// Puts an infinity into the first param's gradient at iteration `iter`, after
/// any replication callback has all-reduced the gradients.
class InjectOverflow : public Solver::Callback {
 public:
  InjectOverflow(Solver* solver, int iter) : solver_(solver), iter_(iter) {}
  void OnGradientsReady() override {
    if (solver_->iter() != iter_) return;
    solver_->net().param_block().diff().mutable_cpu()[0] = std::numeric_limits<float>::infinity();
  }

 private:
  Solver* solver_;
  int iter_;
};

TEST(LossScalingTest, AnOverflowSkipsTheStepAndHalvesTheScale) {
  ScratchDir dir;
  auto solver = MakeSolver(ScaledSolver("global_grad_scale_adaptive: true", dir.file("r"), 9));
  InjectOverflow inject(solver.get(), 2);
  solver->AddCallback(&inject);
  solver->Step(2);
  const std::vector<float> before = Weights(solver->net());
  const std::vector<float> history = AllHistory(*solver);
  solver->Step(1);
  EXPECT_EQ(solver->iter(), 3);
  EXPECT_EQ(Weights(solver->net()), before);
  EXPECT_EQ(AllHistory(*solver), history);
  EXPECT_EQ(solver->loss_scaler().scale(), 32768.0f);
  solver->Step(1);
  EXPECT_NE(Weights(solver->net()), before);
  for (float value : AllParams(solver->net())) ASSERT_TRUE(std::isfinite(value));
}

TEST(LossScalingTest, AStaticScaleSkipsAnOverflowedStepToo) {
  ScratchDir dir;
  auto solver = MakeSolver(ScaledSolver("global_grad_scale: 64", dir.file("r"), 9));
  InjectOverflow inject(solver.get(), 0);
  solver->AddCallback(&inject);
  const std::vector<float> before = Weights(solver->net());
  solver->Step(1);
  EXPECT_EQ(Weights(solver->net()), before);
  EXPECT_EQ(solver->loss_scaler().scale(), 64.0f);
}

TEST(LossScalingTest, OneReplicasOverflowSkipsTheStepOnEveryReplica) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 64);
  const int threads = Threads();
  const int blas_threads = BlasThreads();
  SetThreads(1);
  auto solver_param = [&](int batch) {
    SolverParameter param = ParseText<SolverParameter>(LeNetSolver(dir.file("db"), batch));
    param.set_max_iter(5);
    param.mutable_net_param()->set_global_grad_scale_adaptive(true);
    return param;
  };
  auto one = SolverRegistry::Create(solver_param(16));
  InjectOverflow inject_one(one.get(), 2);
  one->AddCallback(&inject_one);
  one->Solve();
  ReplicationOptions options;
  options.local_replicas = 2;
  options.timeout_seconds = 120;
  Replicas two(solver_param(8), options);
  // Replica 1 alone overflows, after the all-reduce: the replicas must agree.
  InjectOverflow inject_two(&two.solver(1), 2);
  two.solver(1).AddCallback(&inject_two);
  two.Solve("");
  SetThreads(threads);
  SetBlasThreads(blas_threads);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(two.solver(r).loss_scaler().scale(), 32768.0f) << "replica " << r;
    EXPECT_EQ(AllParams(two.solver(r).net()), AllParams(two.solver(0).net())) << "replica " << r;
  }
  EXPECT_EQ(one->loss_scaler().scale(), 32768.0f);
  EXPECT_LT(WorstRelativeDifference(one->net(), two.solver(0).net()), 1e-5);
}

TEST(LossScalingTest, ResumeWithADynamicScaleIsBitIdentical) {
  ScratchDir dir;
  const std::string net = "global_grad_scale_adaptive: true";
  const std::string growth = "loss_scale_growth_interval: 3 ";
  auto straight = MakeSolver(ScaledSolver(net, dir.file("straight"), 10, growth));
  InjectOverflow inject(straight.get(), 4);
  straight->AddCallback(&inject);
  straight->Solve();
  auto first =
      MakeSolver(ScaledSolver(net, dir.file("split"), 6, growth + "snapshot_after_train: true"));
  InjectOverflow inject_first(first.get(), 4);
  first->AddCallback(&inject_first);
  first->Solve();
  SolverState state;
  ReadProtoFromBinaryFile(dir.file("split_iter_6.solverstate"), &state);
  // Doubled after iterations 0-2 were clean, halved by iteration 4's overflow,
  // then iteration 5 clean.
  EXPECT_EQ(state.loss_scale(), 65536.0f);
  EXPECT_EQ(state.loss_scale_clean_steps(), 1);
  auto second = MakeSolver(ScaledSolver(net, dir.file("split"), 10, growth));
  second->Solve(dir.file("split_iter_6.solverstate"));
  EXPECT_EQ(second->loss_scaler().scale(), straight->loss_scaler().scale());
  EXPECT_EQ(second->loss_scaler().clean_steps(), straight->loss_scaler().clean_steps());
  EXPECT_EQ(AllParams(second->net()), AllParams(straight->net()));
  EXPECT_EQ(AllHistory(*second), AllHistory(*straight));
}

}  // namespace
}  // namespace demi
