#ifndef DEMI_PARALLEL_LAUNCH_ENV_HPP_
#define DEMI_PARALLEL_LAUNCH_ENV_HPP_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace demi {

/// Environment variables by name.
using Environment = std::map<std::string, std::string>;

/// Where a launcher (mpirun, srun, torchrun, mpiexec) placed this process.
struct LaunchEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;         ///< among the ranks on this host (0 when the launcher does not say)
  int local_size = 0;         ///< ranks on this host; 0 when the launcher does not say
  std::string source;         ///< the launcher: "Open MPI", "Slurm", "torchrun" or "MPICH"
  std::string rank_variable;  ///< where rank came from, e.g. "OMPI_COMM_WORLD_RANK"
  std::string size_variable;  ///< where world_size came from
  std::string job_id;         ///< the launcher's id of this job (or job step); "" when none
};

/// The launcher that started this process, read from its variables; the
/// first launcher whose rank variable is set wins:
///   Open MPI   OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE, job OMPI_MCA_ess_base_jobid
///              (Open MPI 4) or PMIX_NAMESPACE (5)
///   Slurm      SLURM_PROCID/NTASKS/LOCALID, ranks on this host from
///              SLURM_STEP_TASKS_PER_NODE (else SLURM_TASKS_PER_NODE) at SLURM_NODEID,
///              job SLURM_JOB_ID.SLURM_STEP_ID
///   torchrun   RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE, job TORCHELASTIC_RUN_ID
///   MPICH      PMI_RANK/PMI_SIZE, MPI_LOCALRANKID/MPI_LOCALNRANKS
/// nullopt when none is set. A pure function of `env` (tests pass their own).
/// A value that is not a number, a rank not below its size, a size of 0 or a
/// missing size throws Error naming the variable.
std::optional<LaunchEnv> ReadLaunchEnv(const Environment& env);

/// The variables of this process.
Environment ProcessEnvironment();

/// The rank and size variables ReadLaunchEnv reads (tests clear them, so that
/// a test suite run inside a launcher's job starts single-process tools).
std::vector<std::string> LauncherRankVariables();

/// The GPUs of one rank under --gpu=all: when several ranks share the host
/// (local_size > 1, or a local_rank > 0), rank takes GPU local_rank % count,
/// so `srun --ntasks-per-node=4` on a 4-GPU host gives each rank its own;
/// otherwise the rank takes them all (one process per host).
std::vector<int> GpusOfRank(const std::vector<int>& all_gpus, const LaunchEnv& launch);

/// CPU threads for one rank when neither --threads nor OMP_NUM_THREADS says:
/// the cores are shared out among the ranks of the host, unless the launcher
/// already pinned this process to fewer cores than the machine has (mpirun
/// binds each rank to its own cores, Slurm through its cgroup). Returns 0 to
/// keep the default.
int ThreadsOfRank(int visible_cores, int machine_cores, const LaunchEnv& launch);

}  // namespace demi

#endif  // DEMI_PARALLEL_LAUNCH_ENV_HPP_
