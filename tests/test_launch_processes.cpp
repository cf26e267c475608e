// build/tools/train started as cluster users start it: by mpirun (Open MPI)
// and with Slurm's variables, ranks and world size left to the launcher,
// meeting through a file rendezvous on loopback.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "data_test_util.hpp"
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

// The CAFFE engine, one thread per rank: oneDNN's convolutions sum in an
// order that depends on the threads and the batch (see
// test_replication_processes.cpp).
const char kEngine[] = "engine: CAFFE ";

/// LeNet for 50 iterations in batches of `batch`, snapshotting to dir/run.
void WriteLeNetSolver(const ScratchDir& dir, int batch) {
  WriteBandsDB(dir.file("db"), 160);
  std::ofstream(dir.file("solver.prototxt"))
      << LeNetSolver(dir.file("db"), batch,
                     StrCat(kEngine, "snapshot: 50 snapshot_prefix: \"", dir.file("run"), "\""));
}

/// What every rank runs, the launcher's variables deciding its rank.
std::string TrainCommand(const ScratchDir& dir) {
  return StrCat(ToolPath("train"),
                " --logtostderr --threads=1 --solver=", dir.file("solver.prototxt"),
                " --rendezvous=file://", dir.file("rendezvous"), " --rendezvous_host=127.0.0.1");
}

TEST(LaunchProcessesTest, MpirunTwoRanksMatchOneRank) {
  if (RunShell("command -v mpirun").status != 0) {
    GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin; scripts/install_deps.sh)";
  }
  ScratchDir dir;
  WriteLeNetSolver(dir, 32);
  // Root needs --allow-run-as-root; --oversubscribe lets 2 ranks start on a
  // machine with one core. Open MPI's own transports are not used: Gloo
  // carries the all-reduces.
  const Result run = RunShell(
      StrCat("timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 ", TrainCommand(dir)));
  ASSERT_EQ(run.status, 0) << run.output;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(run.output.find(StrCat("Rank ", rank,
                                     " of 2 (rank from OMPI_COMM_WORLD_RANK, world size from "
                                     "OMPI_COMM_WORLD_SIZE; launcher Open MPI), local rank ",
                                     rank, " of 2 on this host, run id job-")),
              std::string::npos)
        << run.output;
  }
  EXPECT_NE(run.output.find("Replication: 2 replicas (1 in this process, 2 process(es))"),
            std::string::npos)
      << run.output;
  ExpectSnapshotMatchesOneThread(dir, kEngine);
}

/// The variables srun gives task `rank` of 2 on one node, in job step 4242.0.
std::string SrunVariables(int rank) {
  return StrCat("SLURM_PROCID=", rank, " SLURM_NTASKS=2 SLURM_LOCALID=", rank,
                " SLURM_NODEID=0 SLURM_STEP_TASKS_PER_NODE=2 SLURM_JOB_ID=4242 SLURM_STEP_ID=0");
}

TEST(LaunchProcessesTest, SrunVariablesDriveTwoProcesses) {
  ScratchDir dir;
  WriteLeNetSolver(dir, 32);
  // Each task pinned to its own core, as srun's default binding does: two
  // one-thread ranks left to roam a loaded 2-core machine ran 6x slower
  // (300 ms/step against 50 ms pinned, the same as under mpirun).
  std::string script;
  for (int rank = 0; rank < 2; ++rank) {
    script += StrCat("env ", SrunVariables(rank), " timeout 300 taskset -c $((", rank,
                     " % $(nproc))) ", TrainCommand(dir), " > ",
                     dir.file(StrCat("rank", rank, ".log")), " 2>&1 & p", rank, "=$!; ");
  }
  const Result run = RunShell(script + "wait $p0; s0=$?; wait $p1; s1=$?; exit $((s0|s1))");
  const std::string log0 = ReadAll(dir.file("rank0.log"));
  const std::string log1 = ReadAll(dir.file("rank1.log"));
  ASSERT_EQ(run.status, 0) << "rank 0:\n" << log0 << "\nrank 1:\n" << log1;
  const std::string log[] = {log0, log1};
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(log[rank].find(StrCat("Rank ", rank,
                                    " of 2 (rank from SLURM_PROCID, world size from SLURM_NTASKS; "
                                    "launcher Slurm), local rank ",
                                    rank, " of 2 on this host, run id job-4242.0")),
              std::string::npos)
        << log[rank];
  }
  EXPECT_NE(log0.find("Replication: 2 replicas (1 in this process, 2 process(es))"),
            std::string::npos)
      << log0;
  ExpectSnapshotMatchesOneThread(dir, kEngine);
}

/// LeNet for 2 iterations in batches of 4.
void WriteShortSolver(const ScratchDir& dir) {
  WriteBandsDB(dir.file("db"), 20);
  std::string solver = LeNetSolver(dir.file("db"), 4);
  solver.replace(solver.find("max_iter: 50"), 12, "max_iter: 2");
  std::ofstream(dir.file("solver.prototxt")) << solver;
}

/// A short run of train with `variables` in its environment and `flags`.
Result TrainWith(const ScratchDir& dir, const std::string& variables, const std::string& flags) {
  return RunShell(StrCat("env ", variables, " timeout 120 ", ToolPath("train"),
                         " --logtostderr --solver=", dir.file("solver.prototxt"), " ", flags));
}

TEST(LaunchProcessesTest, FlagsWinOverTheLaunchersVariables) {
  ScratchDir dir;
  WriteShortSolver(dir);
  // Both flags given: the variables are not even read.
  Result run = TrainWith(dir, "SLURM_PROCID=oops SLURM_NTASKS=2", "--rank=0 --world_size=1");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output.find("launcher"), std::string::npos) << run.output;
  // Only --world_size given: the rank still comes from the launcher.
  run = TrainWith(dir, "RANK=0 WORLD_SIZE=2", "--world_size=1");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("Rank 0 of 1 (rank from RANK, world size from --world_size; "
                            "launcher torchrun)"),
            std::string::npos)
      << run.output;
}

TEST(LaunchProcessesTest, BadLauncherVariablesFailWithOneLine) {
  ScratchDir dir;
  WriteShortSolver(dir);
  Result run = TrainWith(dir, "SLURM_PROCID=oops SLURM_NTASKS=2", "");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("SLURM_PROCID='oops' (set by Slurm) is not a non-negative integer"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find(", loss = "), std::string::npos) << run.output;
  // Under a launcher the rendezvous is still required, and said so at once.
  run = TrainWith(dir, "RANK=1 WORLD_SIZE=2", "");
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("--rendezvous is required with 2 ranks (started by torchrun)"),
            std::string::npos)
      << run.output;
}

}  // namespace
}  // namespace demi
