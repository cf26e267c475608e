// SIGINT and SIGHUP become solver actions: snapshot, stop or nothing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "demi/util/signal.hpp"
#include "log_capture.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

TEST(SignalTest, ParsesEffects) {
  EXPECT_EQ(ParseSolverAction("stop"), SolverAction::kStop);
  EXPECT_EQ(ParseSolverAction("snapshot"), SolverAction::kSnapshot);
  EXPECT_EQ(ParseSolverAction("snapshot_stop"), SolverAction::kSnapshotStop);
  EXPECT_EQ(ParseSolverAction("none"), SolverAction::kNone);
  ExpectErrorContaining([] { ParseSolverAction("exit"); },
                        {"'exit'", "stop, snapshot, snapshot_stop or none"});
}

TEST(SignalTest, HandlerTurnsSignalsIntoActionsOnce) {
  SignalHandler handler(SolverAction::kStop, SolverAction::kSnapshot, SolverAction::kSnapshotStop);
  EXPECT_EQ(handler.CheckForSignals(), SolverAction::kNone);
  ::raise(SIGHUP);
  EXPECT_EQ(handler.CheckForSignals(), SolverAction::kSnapshot);
  EXPECT_EQ(handler.CheckForSignals(), SolverAction::kNone);
  ::raise(SIGINT);
  EXPECT_EQ(handler.GetActionFunction()(), SolverAction::kStop);
  EXPECT_EQ(handler.CheckForSignals(), SolverAction::kNone);
  ::raise(SIGTERM);  // would end the test binary without the handler
  EXPECT_EQ(handler.CheckForSignals(), SolverAction::kSnapshotStop);
  EXPECT_EQ(handler.CheckForSignals(), SolverAction::kNone);
}

const char* kNet = R"(
  net_param {
    layer { name: "data" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 4 dim: 3 } data_filler { type: "gaussian" } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
            inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
    layer { name: "relu" type: "ReLU" bottom: "y" top: "loss" loss_weight: 1 }
  }
  type: "SGD" lr_policy: "fixed" base_lr: 0.01 max_iter: 10
)";

/// Raises `signal` at the start of iteration `iter`.
class Raiser : public Solver::Callback {
 public:
  Raiser(const Solver* solver, int iter, int signal)
      : solver_(solver), iter_(iter), signal_(signal) {}
  void OnStart() override {
    if (solver_->iter() == iter_) ::raise(signal_);
  }

 private:
  const Solver* solver_;
  int iter_;
  int signal_;
};

TEST(SignalTest, SighupSnapshotsAndSigintStops) {
  ScratchDir dir;
  auto solver = MakeSolver(
      StrCat(kNet, "snapshot_after_train: true snapshot_prefix: \"", dir.file("run"), "\""));
  SignalHandler handler(SolverAction::kStop, SolverAction::kSnapshot, SolverAction::kNone);
  solver->SetActionFunction(handler.GetActionFunction());
  Raiser hup(solver.get(), 2, SIGHUP);
  Raiser interrupt(solver.get(), 5, SIGINT);
  solver->AddCallback(&hup);
  solver->AddCallback(&interrupt);
  solver->Solve();
  // Both act after the iteration they arrived in: the snapshot at 3, the stop
  // at 6, which snapshot_after_train snapshots.
  EXPECT_EQ(solver->iter(), 6);
  EXPECT_TRUE(solver->requested_early_exit());
  namespace fs = std::filesystem;
  for (const char* name : {"run_iter_3.caffemodel", "run_iter_3.solverstate",
                           "run_iter_6.caffemodel", "run_iter_6.solverstate"}) {
    EXPECT_TRUE(fs::exists(dir.file(name))) << name;
  }
  EXPECT_FALSE(fs::exists(dir.file("run_iter_10.caffemodel")));
}

TEST(SignalTest, NoneIgnoresTheSignal) {
  auto solver = MakeSolver(StrCat(kNet, "snapshot_after_train: false"));
  SignalHandler handler(SolverAction::kNone, SolverAction::kNone, SolverAction::kNone);
  solver->SetActionFunction(handler.GetActionFunction());
  Raiser interrupt(solver.get(), 1, SIGINT);
  solver->AddCallback(&interrupt);
  solver->Solve();
  EXPECT_EQ(solver->iter(), 10);
  EXPECT_FALSE(solver->requested_early_exit());
}

TEST(SignalTest, SigtermSnapshotsThenStopsWithoutSnapshotAfterTrain) {
  ScratchDir dir;
  auto solver = MakeSolver(
      StrCat(kNet, "snapshot_after_train: false snapshot_prefix: \"", dir.file("run"), "\""));
  SignalHandler handler(SolverAction::kStop, SolverAction::kSnapshot, SolverAction::kSnapshotStop);
  solver->SetActionFunction(handler.GetActionFunction());
  Raiser term(solver.get(), 4, SIGTERM);
  solver->AddCallback(&term);
  solver->Solve();
  EXPECT_EQ(solver->iter(), 5);
  EXPECT_TRUE(solver->requested_early_exit());
  EXPECT_TRUE(std::filesystem::exists(dir.file("run_iter_5.caffemodel")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("run_iter_5.solverstate")));
}

TEST(SignalTest, SnapshotStopWritesOneSnapshotWithSnapshotAfterTrain) {
  ScratchDir dir;
  auto solver = MakeSolver(
      StrCat(kNet, "snapshot_after_train: true snapshot_prefix: \"", dir.file("run"), "\""));
  int polls = 0;
  solver->SetActionFunction(
      [&] { return ++polls == 3 ? SolverAction::kSnapshotStop : SolverAction::kNone; });
  // Before snapshot_after_train's turn, the request's snapshot is on disk: its
  // inode changes if it is written again (a new file renamed over it).
  const std::string model = dir.file("run_iter_3.caffemodel");
  struct InodeBeforeSnapshots : public Solver::Callback {
    explicit InodeBeforeSnapshots(std::string path) : path(std::move(path)) {}
    void OnBeforeTestOrSnapshot() override {
      struct stat info {};
      inodes.push_back(::stat(path.c_str(), &info) == 0 ? info.st_ino : 0);
    }
    std::string path;
    std::vector<ino_t> inodes;
  } watcher(model);
  solver->AddCallback(&watcher);
  solver->Solve();
  EXPECT_EQ(solver->iter(), 3);
  struct stat info {};
  ASSERT_EQ(::stat(model.c_str(), &info), 0);
  ASSERT_EQ(watcher.inodes.size(), 2u);  // the request's turn and snapshot_after_train's
  EXPECT_EQ(watcher.inodes[0], 0u);      // not written yet
  EXPECT_EQ(watcher.inodes[1], info.st_ino) << "iteration 3 was snapshotted twice";
}

TEST(SignalTest, StopDuringATestInterruptsIt) {
  auto solver = MakeSolver(StrCat(kNet, "test_iter: 5 test_interval: 4"));
  int polls = 0;
  // The test at iteration 0 polls before each of its 5 batches: stop at the
  // second.
  solver->SetActionFunction(
      [&] { return ++polls == 2 ? SolverAction::kStop : SolverAction::kNone; });
  solver->Solve();
  EXPECT_TRUE(solver->requested_early_exit());
  EXPECT_EQ(polls, 3);  // the second request, then one more poll that drains nothing
  EXPECT_EQ(solver->iter(), 0);
  EXPECT_TRUE(solver->Test(0).empty());  // a stopped solver tests nothing more
}

// A snapshot asked for during a test holds the test nets' random streams
// from the test's start, as it holds their read positions: the resumed run
// tests that iteration again on the same random data, and trains on as the
// uninterrupted one.
TEST(SignalTest, ASnapshotDuringATestResumesItsRandomTestData) {
  ScratchDir dir;
  const std::string text =
      StrCat(kNet, "test_iter: 3 test_interval: 2 random_seed: 5 snapshot_after_train: false ",
             "snapshot_prefix: \"", dir.file("run"), "\"");
  auto run = [&](const std::function<SolverAction()>& action, const std::string& resume) {
    auto solver = MakeSolver(text);
    if (action) solver->SetActionFunction(action);
    InfoToSinksOnly info;
    LogCapture log(google::GLOG_INFO);
    solver->Solve(resume);
    std::vector<std::string> lines = log.Containing("Test net output #");
    if (!log.Containing("Test interrupted.").empty()) lines.push_back("interrupted");
    return std::make_pair(lines, AllParams(solver->net()));
  };
  const auto [straight_tests, straight_params] = run(nullptr, "");
  ASSERT_EQ(straight_tests.size(), 6u * 8);  // at 0, 2, ..., 10: 8 outputs each
  // Polls: 3 in the test at 0, one after iterations 0 and 1, then before
  // each batch of the test at 2: the 7th comes before its second.
  int polls = 0;
  const auto stopped =
      run([&] { return ++polls == 7 ? SolverAction::kSnapshotStop : SolverAction::kNone; }, "");
  ASSERT_EQ(stopped.first.back(), "interrupted");
  const std::string state = dir.file("run_iter_2.solverstate");
  ASSERT_TRUE(std::filesystem::exists(state));
  const auto [resumed_tests, resumed_params] = run(nullptr, state);
  EXPECT_EQ(resumed_tests,
            std::vector<std::string>(straight_tests.begin() + 8, straight_tests.end()));
  EXPECT_EQ(resumed_params, straight_params);
}

TEST(SignalTest, AStepAfterAStoppedOneRunsAndTestsInFull) {
  auto solver = MakeSolver(StrCat(
      kNet,
      "test_iter: 1 test_interval: 4 test_initialization: false snapshot_after_train: false"));
  int polls = 0;
  solver->SetActionFunction(
      [&] { return ++polls == 2 ? SolverAction::kStop : SolverAction::kNone; });
  solver->Step(10);
  ASSERT_EQ(solver->iter(), 2);
  // The stop was served: the test at 4 runs and the steps go on (they
  // stopped there once, the earlier stop still standing).
  solver->Step(5);
  EXPECT_EQ(solver->iter(), 7);
  EXPECT_FALSE(solver->requested_early_exit());
}

// iter_size 4 over DummyData (its random stream), Dropout (its mask stream)
// and BatchNorm (statistics that forward updates): all that an abandoned
// iteration must put back.
const char* kAccumulatingNet = R"(
  net_param {
    layer { name: "data" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 4 dim: 3 } data_filler { type: "gaussian" } } }
    layer { name: "bn" type: "BatchNorm" bottom: "x" top: "n" }
    layer { name: "drop" type: "Dropout" bottom: "n" top: "d" }
    layer { name: "ip" type: "InnerProduct" bottom: "d" top: "y"
            inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
    layer { name: "relu" type: "ReLU" bottom: "y" top: "loss" loss_weight: 1 }
  }
  type: "SGD" lr_policy: "fixed" base_lr: 0.01 momentum: 0.9 max_iter: 6 iter_size: 4
  random_seed: 7 snapshot_after_train: false
)";

/// Every param of `solver`'s train net, BatchNorm's statistics included.
std::vector<float> AllParams(Solver& solver) {
  std::vector<float> values;
  for (const auto& layer : solver.net().layers()) {
    for (const auto& blob : layer->blobs()) {
      values.insert(values.end(), blob->cpu_data(), blob->cpu_data() + blob->count());
    }
  }
  return values;
}

TEST(SignalTest, StopBetweenPassesSnapshotsTheIterationStartAndResumesBitIdentically) {
  ScratchDir dir;
  const std::string text = StrCat(kAccumulatingNet, "snapshot_prefix: \"", dir.file("run"), "\"");
  auto uninterrupted = MakeSolver(text);
  uninterrupted->Solve();
  ASSERT_EQ(uninterrupted->iter(), 6);

  // Polls come after passes 1, 2 and 3 of an iteration and after its update:
  // the 14th is after pass 2 of iteration 3. SIGTERM arrives just before it.
  auto stopped = MakeSolver(text);
  SignalHandler handler(SolverAction::kStop, SolverAction::kNone, SolverAction::kSnapshotStop);
  int polls = 0;
  stopped->SetActionFunction([&] {
    if (++polls == 14) ::raise(SIGTERM);
    return handler.CheckForSignals();
  });
  stopped->Solve();
  EXPECT_EQ(polls, 14) << "the stop waited for the end of the iteration";
  EXPECT_EQ(stopped->iter(), 3);
  EXPECT_TRUE(stopped->requested_early_exit());
  const std::string state = dir.file("run_iter_3.solverstate");
  ASSERT_TRUE(std::filesystem::exists(state));
  stopped.reset();  // releases the snapshot prefix

  auto resumed = MakeSolver(text);
  resumed->Solve(state);
  EXPECT_EQ(resumed->iter(), 6);
  const std::vector<float> expected = AllParams(*uninterrupted);
  const std::vector<float> actual = AllParams(*resumed);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    // Bit for bit: the resumed run recomputed iteration 3 from its start.
    EXPECT_EQ(std::memcmp(&actual[i], &expected[i], sizeof(float)), 0)
        << "param float " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

TEST(SignalTest, SnapshotBetweenPassesWaitsForTheIterationsEnd) {
  ScratchDir dir;
  auto solver = MakeSolver(StrCat(kAccumulatingNet, "snapshot_prefix: \"", dir.file("run"), "\""));
  int polls = 0;
  // After pass 1 of iteration 1: the snapshot is of iteration 2, then training goes on.
  solver->SetActionFunction(
      [&] { return ++polls == 5 ? SolverAction::kSnapshot : SolverAction::kNone; });
  solver->Solve();
  EXPECT_EQ(solver->iter(), 6);
  EXPECT_FALSE(solver->requested_early_exit());
  EXPECT_TRUE(std::filesystem::exists(dir.file("run_iter_2.solverstate")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("run_iter_1.solverstate")));
}

}  // namespace
}  // namespace demi
