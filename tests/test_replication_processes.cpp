// Replication across processes, as users run it: build/tools/train ranks
// meeting through a file rendezvous on loopback (Gloo over TCP).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "data_test_util.hpp"
#include "demi/util/io.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"
#include "replication_test_util.hpp"
#include "solver_test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Runs a shell script; returns its exit status.
int Shell(const std::string& script) {
  const int status = std::system(("bash -c '" + script + "'").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// A small LeNet-like solver (fast, for the fault tests); `extra` adds fields.
std::string Solver(const std::string& source, int batch, const std::string& extra) {
  return StrCat(R"(
    base_lr: 0.001 momentum: 0.9 weight_decay: 0.0005 lr_policy: "fixed"
    display: 10 random_seed: 1701 )",
                extra, R"(
    net_param {
      layer { name: "d" type: "Data" top: "data" top: "label"
              transform_param { scale: 0.00390625 }
              data_param { source: ")",
                source, R"(" batch_size: )", batch, R"( backend: LMDB } }
      layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
              convolution_param { num_output: 8 kernel_size: 5 stride: 2
                                  weight_filler { type: "xavier" } } }
      layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
      layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
      layer { name: "ip1" type: "InnerProduct" bottom: "conv1" top: "ip1"
              inner_product_param { num_output: 64 weight_filler { type: "xavier" } } }
      layer { name: "relu2" type: "ReLU" bottom: "ip1" top: "ip1" }
      layer { name: "drop2" type: "Dropout" bottom: "ip1" top: "ip1" }
      layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
              inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
    })");
}

/// The shell command for rank `rank` of `world` with solver file `solver`,
/// logging to rank<rank>.log. `launcher` runs the trainer: `timeout 300`
/// bounds a rank that may hang; `exec` makes the trainer the very process a
/// `&` starts, so `$!` is its pid.
std::string Rank(const ScratchDir& dir, int rank, int world, const std::string& flags,
                 const std::string& solver = "solver.prototxt",
                 const std::string& launcher = "timeout 300") {
  return StrCat(launcher, " ", ToolPath("train"), " --logtostderr --solver=", dir.file(solver),
                " --world_size=", world, " --rank=", rank, " --rendezvous=file://",
                dir.file("rendezvous"), " --rendezvous_host=127.0.0.1 ", flags, " > ",
                dir.file(StrCat("rank", rank, ".log")), " 2>&1");
}

/// LeNet, global batch 64: 2 processes x 2 replicas x 16 train the params
/// that 1 replica x 64 trains.
TEST(ReplicationProcessesTest, TwoProcessesOfTwoReplicasMatchOneReplica) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 160);
  // The CAFFE engine: oneDNN's convolutions (the default engine) sum in an
  // order that depends on the threads and the batch, and 4 replicas of 16 on
  // one thread each drift 3e-3 from 1 x 64 in 50 iterations.
  const std::string engine = "engine: CAFFE ";
  std::ofstream(dir.file("solver.prototxt"))
      << LeNetSolver(dir.file("db"), 16,
                     StrCat(engine, "snapshot: 50 snapshot_prefix: \"", dir.file("run"), "\""));
  const int status = Shell(StrCat(Rank(dir, 0, 2, "--cpu_replicas=2 --run_id=eq"), " & p0=$!; ",
                                  Rank(dir, 1, 2, "--cpu_replicas=2 --run_id=eq"),
                                  " & p1=$!; wait $p0; s0=$?; wait $p1; s1=$?; exit $((s0|s1))"));
  const std::string log0 = ReadAll(dir.file("rank0.log"));
  const std::string log1 = ReadAll(dir.file("rank1.log"));
  ASSERT_EQ(status, 0) << "rank 0:\n" << log0 << "\nrank 1:\n" << log1;
  // Rank 0 logs progress and writes the snapshot; rank 1 does neither.
  EXPECT_NE(log0.find("Iteration 40, loss = "), std::string::npos) << log0;
  EXPECT_NE(log0.find("Replication: 4 replicas (2 in this process, 2 process(es))"),
            std::string::npos);
  EXPECT_EQ(log1.find("Iteration 40, loss = "), std::string::npos) << log1;
  EXPECT_EQ(log1.find("Snapshotting"), std::string::npos) << log1;

  ExpectSnapshotMatchesOneThread(dir, engine);
}

/// Ranks resumed from a snapshot train on bit-identically to the ranks that
/// were not interrupted: the root gathered both ranks' data read positions,
/// Dropout streams and BatchNorm statistics (over Gloo) into the state, and
/// each rank resumes its own.
TEST(ReplicationProcessesTest, ResumedRanksMatchTheUninterruptedRun) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 20);  // global batches of 2 x 3 wrap mid-batch
  for (const std::string run : {"straight", "resumed"}) {
    std::ofstream(dir.file(run + ".prototxt"))
        << Solver(dir.file("db"), 3,
                  StrCat("max_iter: 8 snapshot: 4 snapshot_prefix: \"", dir.file(run), "\""));
    const std::string flags =
        StrCat("--run_id=", run,
               run == "resumed" ? " --snapshot=" + dir.file("straight_iter_4.solverstate") : "");
    const int status = Shell(StrCat(Rank(dir, 0, 2, flags, run + ".prototxt"), " & p0=$!; ",
                                    Rank(dir, 1, 2, flags, run + ".prototxt"),
                                    " & p1=$!; wait $p0; s0=$?; wait $p1; s1=$?; exit $((s0|s1))"));
    ASSERT_EQ(status, 0) << "rank 0:\n"
                         << ReadAll(dir.file("rank0.log")) << "\nrank 1:\n"
                         << ReadAll(dir.file("rank1.log"));
  }
  SolverState state;
  ReadProtoFromBinaryFile(dir.file("straight_iter_4.solverstate"), &state);
  ASSERT_EQ(state.data_position_size(), 2);
  EXPECT_EQ(state.data_position(0).stream_position(), 21);  // blocks 0, 2, 4, 6 of 3
  EXPECT_EQ(state.data_position(1).stream_position(), 24);
  ASSERT_EQ(state.replica_state_size(), 2);
  EXPECT_EQ(state.replica_state(1).replica(), 1);
  EXPECT_EQ(state.replica_state(1).rng_state_size(), state.rng_state_size());
  const std::string straight = ReadAll(dir.file("straight_iter_8.caffemodel"));
  EXPECT_FALSE(straight.empty());
  EXPECT_EQ(ReadAll(dir.file("resumed_iter_8.caffemodel")), straight);
}

TEST(ReplicationProcessesTest, ARankThatNeverJoinsFailsTheOtherWithinTheTimeout) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 20);
  std::ofstream(dir.file("solver.prototxt")) << Solver(dir.file("db"), 4, "max_iter: 10");
  const auto start = std::chrono::steady_clock::now();
  const int status = Shell(Rank(dir, 0, 2, "--run_id=alone --comm_timeout=2"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string log = ReadAll(dir.file("rank0.log"));
  EXPECT_NE(status, 0) << log;
  EXPECT_LT(seconds, 30) << log;
  EXPECT_NE(log.find("rank 0 of 2"), std::string::npos) << log;
  EXPECT_NE(log.find("waited 2 s for rank(s) 1 to join"), std::string::npos) << log;
}

TEST(ReplicationProcessesTest, ARankKilledMidRunFailsTheOtherWithinTheTimeout) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 40);
  std::ofstream(dir.file("solver.prototxt")) << Solver(dir.file("db"), 4, "max_iter: 1000000");
  const std::string flags = "--run_id=kill --comm_timeout=10";
  // Rank 1 is killed once rank 0 has logged training progress. It runs by
  // `exec`, without `timeout`: $p1 is the trainer itself, which the script
  // always kills, with no process-tree tool (pkill) needed.
  const auto start = std::chrono::steady_clock::now();
  const int status = Shell(StrCat(
      Rank(dir, 0, 2, flags), " & p0=$!; ", Rank(dir, 1, 2, flags, "solver.prototxt", "exec"),
      " & p1=$!; for i in $(seq 600); do grep -q \"Iteration 20,\" ", dir.file("rank0.log"),
      " && break; sleep 0.1; done; kill -9 $p1; wait $p0"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string log = ReadAll(dir.file("rank0.log"));
  EXPECT_NE(log.find("Iteration 20,"), std::string::npos) << log;
  EXPECT_NE(status, 0) << log;
  EXPECT_NE(status, 124) << "rank 0 hung until the outer timeout:\n" << log;
  EXPECT_LT(seconds, 90) << log;
  EXPECT_NE(log.find("rank 0 of 2"), std::string::npos) << log;
}

/// Starts ranks 0 and 1 with solver<rank>.prototxt of `dir` and their own
/// `flags`. Both must exit 1 within seconds (far below --comm_timeout),
/// having trained nothing, each with the line "rank <r> of 2: <refusal>".
void ExpectBothRefuse(const ScratchDir& dir, const std::string& flags0, const std::string& flags1,
                      const std::string& refusal) {
  const std::string flags = "--run_id=disagree --comm_timeout=120 ";
  const auto start = std::chrono::steady_clock::now();
  Shell(StrCat(Rank(dir, 0, 2, flags + flags0, "solver0.prototxt"), " & p0=$!; ",
               Rank(dir, 1, 2, flags + flags1, "solver1.prototxt"),
               " & p1=$!; wait $p0; echo $? > ", dir.file("status0"), "; wait $p1; echo $? > ",
               dir.file("status1")));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int rank = 0; rank < 2; ++rank) {
    const std::string log = ReadAll(dir.file(StrCat("rank", rank, ".log")));
    EXPECT_EQ(ReadAll(dir.file(StrCat("status", rank))), "1\n") << "rank " << rank << ":\n" << log;
    EXPECT_NE(log.find(StrCat("rank ", rank, " of 2: ", refusal)), std::string::npos)
        << "rank " << rank << ":\n"
        << log;
    EXPECT_EQ(log.find(", loss = "), std::string::npos) << log;
  }
  EXPECT_LT(seconds, 40) << "the ranks should stop at once, not at --comm_timeout=120";
}

/// Rank 1's solver is rank 0's with `from` replaced by `to`: both ranks
/// refuse when they join, naming `difference`.
void ExpectRefusedAtJoin(const std::string& from, const std::string& to,
                         const std::string& difference) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 20);
  const std::string solver = Solver(dir.file("db"), 4, "max_iter: 100");
  std::string changed = solver;
  const size_t at = changed.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  changed.replace(at, from.size(), to);
  std::ofstream(dir.file("solver0.prototxt")) << solver;
  std::ofstream(dir.file("solver1.prototxt")) << changed;
  ExpectBothRefuse(dir, "", "",
                   StrCat("rank 1 disagrees with rank 0 on ", difference,
                          "; start every rank with the same solver, net, replicas per rank, "
                          "data and build"));
}

TEST(ReplicationProcessesTest, RanksWithDifferentMaxIterAreRefusedAtJoin) {
  ExpectRefusedAtJoin("max_iter: 100", "max_iter: 200", "solver.max_iter (100 vs 200)");
}

TEST(ReplicationProcessesTest, RanksWithDifferentParamShapesAreRefusedAtJoin) {
  ExpectRefusedAtJoin("num_output: 64", "num_output: 32",
                      "net layer 'ip1' param 0 shape (64 1152 (73728) vs 32 1152 (36864))");
}

TEST(ReplicationProcessesTest, RanksWithDifferentLayerTypesAreRefusedAtJoin) {
  ExpectRefusedAtJoin("name: \"relu1\" type: \"ReLU\"", "name: \"relu1\" type: \"Sigmoid\"",
                      "net layer 'relu1' type (ReLU vs Sigmoid)");
}

TEST(ReplicationProcessesTest, RanksWithDifferentReplicaCountsAreRefusedAtJoin) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 20);
  const std::string solver = Solver(dir.file("db"), 4, "max_iter: 100");
  std::ofstream(dir.file("solver0.prototxt")) << solver;
  std::ofstream(dir.file("solver1.prototxt")) << solver;
  ExpectBothRefuse(dir, "--cpu_replicas=2", "",
                   "rank 1 disagrees with rank 0 on replicas per rank (2 on the CPU vs 1 on the "
                   "CPU); ");
}

TEST(ReplicationProcessesTest, RanksResumedFromDifferentIterationsAreRefused) {
  ScratchDir dir;
  WriteBandsDB(dir.file("db"), 20);
  const std::string solver =
      Solver(dir.file("db"), 4,
             StrCat("max_iter: 20 snapshot: 10 snapshot_prefix: \"", dir.file("run"), "\""));
  std::ofstream(dir.file("solver0.prototxt")) << solver;
  std::ofstream(dir.file("solver1.prototxt")) << solver;
  ASSERT_EQ(Shell(StrCat(ToolPath("train"), " --solver=", dir.file("solver0.prototxt"), " > ",
                         dir.file("single.log"), " 2>&1")),
            0)
      << ReadAll(dir.file("single.log"));
  // Only rank 0 resumes: rank 1 would run 10 steps more.
  ExpectBothRefuse(dir, StrCat("--snapshot=", dir.file("run_iter_10.solverstate")), "",
                   "replica 1 disagrees with replica 0 on start iteration (10 vs 0); resume "
                   "every rank from the same --snapshot");
}

}  // namespace
}  // namespace demi
