// What batch fits some bytes: the bisection behind `memory --fit` and the
// choice `train --memory_budget=auto` makes, checked against the memory
// report at neighbouring batches.
#include <gtest/gtest.h>

#include "demi/tools/batch_fit.hpp"
#include "demi/util/batch_size.hpp"
#include "solver_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

// conv -> BN -> ReLU -> pool -> ip -> loss, batch 12 with iter_size 2
// (global batch 24): its activations dominate, recomputation can drop some.
const char* kNet = R"(
  name: "fit"
  layer { name: "data" type: "DummyData" top: "x" top: "label"
          dummy_data_param { shape { dim: 12 dim: 3 dim: 16 dim: 16 } shape { dim: 12 }
                             data_filler { type: "gaussian" }
                             data_filler { type: "constant" value: 1 } } }
  layer { name: "conv1" type: "Convolution" bottom: "x" top: "c1"
          convolution_param { num_output: 16 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "c1" top: "c1" }
  layer { name: "relu1" type: "ReLU" bottom: "c1" top: "c1" }
  layer { name: "conv2" type: "Convolution" bottom: "c1" top: "c2"
          convolution_param { num_output: 16 kernel_size: 3 pad: 1
                              weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "relu2" type: "ReLU" bottom: "c2" top: "c2" }
  layer { name: "pool" type: "Pooling" bottom: "c2" top: "p"
          pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: "ip" type: "InnerProduct" bottom: "p" top: "y"
          inner_product_param { num_output: 4 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "y" bottom: "label" top: "loss" }
)";

SolverParameter Solver(int test_iters) {
  SolverParameter solver;
  *solver.mutable_net_param() = ParseText<NetParameter>(kNet);
  solver.set_type("Adam");
  solver.set_iter_size(2);
  solver.set_base_lr(0.01f);
  solver.set_lr_policy("fixed");
  solver.set_max_iter(2);
  solver.set_snapshot_after_train(false);
  if (test_iters > 0) {
    solver.set_test_interval(1);
    for (int i = 0; i < test_iters; ++i) solver.add_test_iter(1);
  }
  return solver;
}

struct Needs {
  size_t stored;      ///< without recomputation
  size_t recomputed;  ///< with the most recomputation
};

Needs NeedsAt(const FitSpec& spec, int64_t batch) {
  const size_t params = ParamBytes(spec);
  return {NeededBytes(spec, ReportAtBatch(spec, batch), params),
          NeededBytes(spec, ReportAtBatch(spec, batch, 1), params)};
}

TEST(BatchFitTest, TheSolversTrainNetCarriesItsHistoryAndIterSize) {
  const FitSpec spec = SolverTrainNet(Solver(0), "solver.prototxt");
  EXPECT_EQ(spec.history_per_param, 2);  // Adam
  EXPECT_EQ(spec.iter_size, 2);
  EXPECT_EQ(spec.param.state().phase(), TRAIN);
  EXPECT_EQ(ReportAtBatch(spec, 0).batch, 12);
  EXPECT_EQ(HistoryBlobsPerParam("SGD"), 1);
  EXPECT_EQ(HistoryBlobsPerParam("AdaDelta"), 2);
}

TEST(BatchFitTest, LargestFittingBatchIsTheLastThatFits) {
  const FitSpec spec = SolverTrainNet(Solver(0), "solver.prototxt");
  const size_t params = ParamBytes(spec);
  const size_t budget = NeedsAt(spec, 37).stored;
  const int64_t batch = LargestFittingBatch(spec, params, budget, false);
  EXPECT_GE(batch, 37);
  EXPECT_LE(NeedsAt(spec, batch).stored, budget);
  EXPECT_GT(NeedsAt(spec, batch + 1).stored, budget);
  EXPECT_GE(LargestFittingBatch(spec, params, budget, true), batch);
  EXPECT_EQ(LargestFittingBatch(spec, params, NeedsAt(spec, 1).recomputed - 1, true), 0);
}

TEST(BatchFitTest, RoomForTheGlobalBatchTrainsItAtIterSizeOne) {
  const FitSpec spec = SolverTrainNet(Solver(0), "solver.prototxt");
  const AutoFit fit = ChooseAutoFit(spec, NeedsAt(spec, 24).stored, "test");
  EXPECT_EQ(fit.written_batch, 12);
  EXPECT_EQ(fit.global_batch, 24);
  EXPECT_EQ(fit.batch, 24);
  EXPECT_EQ(fit.iter_size, 1);
  EXPECT_EQ(fit.memory_budget, 0u);
  EXPECT_EQ(fit.needed_bytes, NeedsAt(spec, 24).stored);
}

TEST(BatchFitTest, RecomputationLetsALargerDivisorFitUnderABudget) {
  const FitSpec spec = SolverTrainNet(Solver(0), "solver.prototxt");
  const Needs at24 = NeedsAt(spec, 24);
  ASSERT_LT(at24.recomputed, at24.stored) << "the net must have something to recompute";
  const size_t available = at24.recomputed + (at24.stored - at24.recomputed) / 2;
  const AutoFit fit = ChooseAutoFit(spec, available, "test");
  EXPECT_EQ(fit.batch, 24);
  EXPECT_EQ(fit.iter_size, 1);
  EXPECT_GT(fit.memory_budget, 0u);
  EXPECT_LE(fit.needed_bytes, available);
  EXPECT_GE(fit.needed_bytes, at24.recomputed);  // drops only what the room asks
}

TEST(BatchFitTest, TooLittleRoomForTheGlobalBatchSplitsItIntoIterSize) {
  const FitSpec spec = SolverTrainNet(Solver(0), "solver.prototxt");
  // Room for batch 9 with recomputation: the largest divisor of 24 below is 8.
  const AutoFit fit = ChooseAutoFit(spec, NeedsAt(spec, 9).recomputed, "test");
  EXPECT_EQ(fit.batch, 8);
  EXPECT_EQ(fit.iter_size, 3);
  EXPECT_LE(fit.needed_bytes, NeedsAt(spec, 9).recomputed);
}

TEST(BatchFitTest, NotEvenBatchOneIsAnErrorWithTheFigures) {
  const FitSpec spec = SolverTrainNet(Solver(0), "solver.prototxt");
  ExpectErrorContaining([&] { ChooseAutoFit(spec, NeedsAt(spec, 1).recomputed - 1, "a limit"); },
                        {"--memory_budget=auto", "not even batch 1", "'fit'", "a limit"});
}

TEST(BatchFitTest, TheRewrittenSolverTrainsAtTheChosenBatchAndTestsAtTheWritten) {
  SolverParameter solver = Solver(2);
  const FitSpec spec = SolverTrainNet(solver, "solver.prototxt");
  // Room for batch 8 only with recomputation.
  const AutoFit fit = ChooseAutoFit(spec, NeedsAt(spec, 8).recomputed + 1, "test");
  ASSERT_EQ(fit.batch, 8);
  ASSERT_GT(fit.memory_budget, 0u);
  ApplyAutoFit(fit, &solver);
  EXPECT_FALSE(solver.has_net_param());
  EXPECT_EQ(solver.test_net_param_size(), 2);
  EXPECT_EQ(solver.iter_size(), 3);
  EXPECT_EQ(solver.memory_budget(), fit.memory_budget);
  const std::unique_ptr<demi::Solver> built = SolverRegistry::Create(solver);
  EXPECT_EQ(built->net().blob_by_name("x")->shape(0), 8);
  ASSERT_EQ(built->test_nets().size(), 2u);
  for (const auto& test : built->test_nets()) EXPECT_EQ(test->blob_by_name("x")->shape(0), 12);
  built->Solve();
  EXPECT_EQ(built->iter(), 2);
}

// The test nets share the train net's arena at their own batches: what the
// largest plans is a floor under the arena whatever the train batch.
TEST(BatchFitTest, TheTestNetsArenaIsAFloorUnderTheTrainNets) {
  SolverParameter solver = Solver(0);
  NetParameter test = ParseText<NetParameter>(kNet);
  SetBatchSize(&test, 96);
  *solver.add_test_net_param() = test;
  solver.add_test_iter(1);
  solver.add_test_iter(1);  // and one instance of the net_param
  solver.set_test_interval(1);
  const FitSpec plain = SolverTrainNet(solver, "solver.prototxt");
  const std::vector<FitSpec> tests = SolverTestNetSpecs(solver);
  ASSERT_EQ(tests.size(), 2u);  // the test_net_param, then the net_param in TEST
  EXPECT_EQ(tests[0].param.state().phase(), TEST);
  const TestArena arena = SolverTestArena(tests, "ARENA");
  EXPECT_EQ(arena.net, 0);
  EXPECT_EQ(arena.batch, 96);
  EXPECT_EQ(arena.bytes, ReportAtBatch(tests[0], 0).arena_bytes);
  EXPECT_GT(arena.bytes, ReportAtBatch(tests[1], 0).arena_bytes);

  FitSpec floored = plain;
  floored.arena_floor = arena.bytes;
  const size_t train_arena = ReportAtBatch(plain, 24).arena_bytes;
  ASSERT_GT(arena.bytes, train_arena) << "the test net must outgrow the train net at 24";
  EXPECT_EQ(NeedsAt(floored, 24).stored, NeedsAt(plain, 24).stored - train_arena + arena.bytes);
  // Room for the train net alone at 24 is too little beside the test net.
  ExpectErrorContaining([&] { ChooseAutoFit(floored, NeedsAt(plain, 24).stored, "a limit"); },
                        {"not even batch 1", "the test nets, sharing its arena, plan"});
  const AutoFit fit = ChooseAutoFit(floored, NeedsAt(floored, 24).stored, "test");
  EXPECT_EQ(fit.batch, 24);
  EXPECT_EQ(fit.needed_bytes, NeedsAt(floored, 24).stored);
  // With NONE nothing is shared: the test nets' bytes add to the train net's.
  FitSpec unshared = plain;
  unshared.strategy = "NONE";
  const size_t none_tests = SolverTestArena(tests, "NONE").bytes;
  EXPECT_EQ(none_tests, ReportAtBatch(tests[0], 0).none_bytes);
  const size_t alone = NeedsAt(unshared, 24).stored;
  unshared.arena_floor = none_tests;
  EXPECT_EQ(NeedsAt(unshared, 24).stored, alone + none_tests);
}

}  // namespace
}  // namespace demi
