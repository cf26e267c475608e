// Reading rank, world size and local rank from the variables launchers set
// (mpirun, srun, torchrun, mpiexec), and what a rank takes of its host.
#include <gtest/gtest.h>

#include "demi/common.hpp"
#include "demi/parallel/launch_env.hpp"

namespace demi {
namespace {

/// The error ReadLaunchEnv throws for `env`, or "no error".
std::string ReadError(const Environment& env) {
  try {
    ReadLaunchEnv(env);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(LaunchEnvTest, NoLauncherGivesNothing) {
  EXPECT_FALSE(ReadLaunchEnv({}).has_value());
  EXPECT_FALSE(ReadLaunchEnv({{"PATH", "/usr/bin"}, {"SLURM_JOB_ID", "7"}}).has_value());
}

TEST(LaunchEnvTest, OpenMpi) {
  const std::optional<LaunchEnv> launch = ReadLaunchEnv({{"OMPI_COMM_WORLD_RANK", "3"},
                                                         {"OMPI_COMM_WORLD_SIZE", "4"},
                                                         {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                                         {"OMPI_MCA_ess_base_jobid", "8886"}});
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->rank, 3);
  EXPECT_EQ(launch->world_size, 4);
  EXPECT_EQ(launch->local_rank, 1);
  EXPECT_EQ(launch->local_size, 2);
  EXPECT_EQ(launch->source, "Open MPI");
  EXPECT_EQ(launch->rank_variable, "OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(launch->size_variable, "OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(launch->job_id, "8886");
}

TEST(LaunchEnvTest, OpenMpi5NamesItsJobByPmixNamespace) {
  const std::optional<LaunchEnv> launch = ReadLaunchEnv({{"OMPI_COMM_WORLD_RANK", "0"},
                                                         {"OMPI_COMM_WORLD_SIZE", "1"},
                                                         {"PMIX_NAMESPACE", "prterun-h-42@1"}});
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->job_id, "prterun-h-42@1");
  // No local variables: local rank 0, ranks on this host unknown.
  EXPECT_EQ(launch->local_rank, 0);
  EXPECT_EQ(launch->local_size, 0);
}

TEST(LaunchEnvTest, SlurmCountsTheTasksOnItsNode) {
  Environment env = {{"SLURM_PROCID", "6"},
                     {"SLURM_NTASKS", "7"},
                     {"SLURM_LOCALID", "0"},
                     {"SLURM_NODEID", "3"},
                     {"SLURM_JOB_ID", "1234"},
                     {"SLURM_STEP_ID", "2"},
                     {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"}};
  std::optional<LaunchEnv> launch = ReadLaunchEnv(env);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->rank, 6);
  EXPECT_EQ(launch->world_size, 7);
  EXPECT_EQ(launch->local_rank, 0);
  EXPECT_EQ(launch->local_size, 1);  // node 3: the last entry, "1"
  EXPECT_EQ(launch->source, "Slurm");
  EXPECT_EQ(launch->job_id, "1234.2");

  env["SLURM_PROCID"] = "3";
  env["SLURM_LOCALID"] = "1";
  env["SLURM_NODEID"] = "1";
  launch = ReadLaunchEnv(env);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->local_rank, 1);
  EXPECT_EQ(launch->local_size, 2);  // node 1: inside "2(x3)"

  // Without the step's list, the job's; without a step, the job id alone.
  env.erase("SLURM_STEP_TASKS_PER_NODE");
  env.erase("SLURM_STEP_ID");
  env["SLURM_TASKS_PER_NODE"] = "1,3";
  launch = ReadLaunchEnv(env);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->local_size, 3);
  EXPECT_EQ(launch->job_id, "1234");
}

TEST(LaunchEnvTest, Torchrun) {
  std::optional<LaunchEnv> launch = ReadLaunchEnv({{"RANK", "5"},
                                                   {"WORLD_SIZE", "8"},
                                                   {"LOCAL_RANK", "1"},
                                                   {"LOCAL_WORLD_SIZE", "4"},
                                                   {"TORCHELASTIC_RUN_ID", "exp7"}});
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->rank, 5);
  EXPECT_EQ(launch->world_size, 8);
  EXPECT_EQ(launch->local_rank, 1);
  EXPECT_EQ(launch->local_size, 4);
  EXPECT_EQ(launch->source, "torchrun");
  EXPECT_EQ(launch->job_id, "exp7");
  // torchrun's default run id is the same for every run: no job id.
  launch = ReadLaunchEnv({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_RUN_ID", "none"}});
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->job_id, "");
}

TEST(LaunchEnvTest, Mpich) {
  const std::optional<LaunchEnv> launch = ReadLaunchEnv(
      {{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "1"}});
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->rank, 2);
  EXPECT_EQ(launch->world_size, 3);
  EXPECT_EQ(launch->local_size, 1);
  EXPECT_EQ(launch->source, "MPICH");
}

TEST(LaunchEnvTest, FirstLauncherInOrderWins) {
  // mpirun inside a Slurm allocation: Open MPI's ranks, not Slurm's.
  Environment env = {{"OMPI_COMM_WORLD_RANK", "1"},
                     {"OMPI_COMM_WORLD_SIZE", "2"},
                     {"SLURM_PROCID", "0"},
                     {"SLURM_NTASKS", "1"},
                     {"RANK", "3"},
                     {"WORLD_SIZE", "5"},
                     {"PMI_RANK", "4"},
                     {"PMI_SIZE", "6"}};
  std::optional<LaunchEnv> launch = ReadLaunchEnv(env);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->source, "Open MPI");
  EXPECT_EQ(launch->rank, 1);
  env.erase("OMPI_COMM_WORLD_RANK");
  launch = ReadLaunchEnv(env);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->source, "Slurm");
  EXPECT_EQ(launch->world_size, 1);
  env.erase("SLURM_PROCID");
  launch = ReadLaunchEnv(env);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->source, "torchrun");
  EXPECT_EQ(launch->world_size, 5);
  env.erase("RANK");
  launch = ReadLaunchEnv(env);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->source, "MPICH");
  EXPECT_EQ(launch->world_size, 6);
}

TEST(LaunchEnvTest, BadValuesNameTheVariable) {
  EXPECT_EQ(ReadError({{"OMPI_COMM_WORLD_RANK", "abc"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
            "OMPI_COMM_WORLD_RANK='abc' (set by Open MPI) is not a non-negative integer");
  EXPECT_EQ(ReadError({{"RANK", "0"}, {"WORLD_SIZE", "-2"}}),
            "WORLD_SIZE='-2' (set by torchrun) is not a non-negative integer");
  EXPECT_EQ(ReadError({{"RANK", "0"}, {"WORLD_SIZE", "99999999999"}}),
            "WORLD_SIZE='99999999999' (set by torchrun) is not a non-negative integer");
  EXPECT_EQ(ReadError({{"RANK", " 1"}, {"WORLD_SIZE", "2"}}),
            "RANK=' 1' (set by torchrun) is not a non-negative integer");
  EXPECT_EQ(ReadError({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}}),
            "SLURM_PROCID=4 (set by Slurm) is not below SLURM_NTASKS=4");
  EXPECT_EQ(ReadError({{"PMI_RANK", "0"}, {"PMI_SIZE", "0"}}),
            "PMI_SIZE=0 (set by MPICH): there must be at least one rank");
  EXPECT_EQ(ReadError({{"RANK", "0"}}),
            "RANK is set (by torchrun) but WORLD_SIZE is not: set both, or give --rank and "
            "--world_size");
  EXPECT_EQ(
      ReadError(
          {{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}}),
      "LOCAL_RANK=2 (set by torchrun) is not below the 2 rank(s) it says share this host");
  const Environment slurm = {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_NODEID", "2"}};
  Environment env = slurm;
  env["SLURM_TASKS_PER_NODE"] = "2(x2";
  EXPECT_EQ(ReadError(env),
            "SLURM_TASKS_PER_NODE='2(x2' (set by Slurm) is not a non-negative integer");
  env["SLURM_TASKS_PER_NODE"] = "2(x2)";
  EXPECT_EQ(ReadError(env),
            "SLURM_TASKS_PER_NODE='2(x2)' (set by Slurm) lists 2 node(s), but SLURM_NODEID is 2");
}

TEST(LaunchEnvTest, ProcessEnvironmentHoldsThisProcesssVariables) {
  ASSERT_EQ(setenv("DEMI_LAUNCH_ENV_TEST", "a=b", 1), 0);
  const Environment env = ProcessEnvironment();
  unsetenv("DEMI_LAUNCH_ENV_TEST");
  ASSERT_EQ(env.count("DEMI_LAUNCH_ENV_TEST"), 1u);
  EXPECT_EQ(env.at("DEMI_LAUNCH_ENV_TEST"), "a=b");
}

TEST(LaunchEnvTest, GpuAllGivesEachRankOfAHostOneGpu) {
  LaunchEnv launch;
  const std::vector<int> four = {0, 1, 2, 3};
  // One rank per host (or a host the launcher says nothing about): all GPUs.
  launch.local_size = 1;
  EXPECT_EQ(GpusOfRank(four, launch), four);
  launch.local_size = 0;
  EXPECT_EQ(GpusOfRank(four, launch), four);
  // Several ranks per host: local rank modulo the GPUs.
  launch.local_size = 8;
  launch.local_rank = 5;
  EXPECT_EQ(GpusOfRank(four, launch), std::vector<int>{1});
  launch.local_rank = 0;
  EXPECT_EQ(GpusOfRank(four, launch), std::vector<int>{0});
  launch.local_size = 0;
  launch.local_rank = 2;
  EXPECT_EQ(GpusOfRank(four, launch), std::vector<int>{2});
  EXPECT_EQ(GpusOfRank({}, launch), std::vector<int>{});
}

TEST(LaunchEnvTest, RanksOfAHostShareItsCoresUnlessPinned) {
  LaunchEnv launch;
  launch.local_size = 2;
  EXPECT_EQ(ThreadsOfRank(8, 8, launch), 4);
  launch.local_size = 3;
  EXPECT_EQ(ThreadsOfRank(8, 8, launch), 2);
  launch.local_size = 4;
  EXPECT_EQ(ThreadsOfRank(2, 2, launch), 1);
  // mpirun bound this rank to one core: keep what it sees.
  EXPECT_EQ(ThreadsOfRank(1, 8, launch), 0);
  // Alone on the host, or the launcher does not say: the default.
  launch.local_size = 1;
  EXPECT_EQ(ThreadsOfRank(8, 8, launch), 0);
  launch.local_size = 0;
  EXPECT_EQ(ThreadsOfRank(8, 8, launch), 0);
}

}  // namespace
}  // namespace demi
