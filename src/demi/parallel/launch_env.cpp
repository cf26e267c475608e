#include "demi/parallel/launch_env.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "demi/common.hpp"

extern char** environ;

namespace demi {

namespace {

/// The variables one launcher sets; nullptr where it has none.
struct Launcher {
  const char* name;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
};

// In the order they are tried: mpirun inside a Slurm allocation sets both
// Open MPI's and Slurm's variables, and Open MPI's describe its own ranks.
constexpr Launcher kLaunchers[] = {
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
};

}  // namespace

std::vector<std::string> LauncherRankVariables() {
  std::vector<std::string> names;
  for (const Launcher& launcher : kLaunchers) {
    for (const char* name :
         {launcher.rank, launcher.size, launcher.local_rank, launcher.local_size}) {
      if (name != nullptr) names.emplace_back(name);
    }
  }
  return names;
}

namespace {

const std::string* Find(const Environment& env, const char* name) {
  if (name == nullptr) return nullptr;
  const auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

/// A count or index: decimal digits only, within int.
int ParseNumber(const Launcher& launcher, const char* name, const std::string& value) {
  const bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  const long long number = digits && value.size() <= 10 ? std::stoll(value) : -1;
  DEMI_CHECK(number >= 0 && number <= std::numeric_limits<int>::max(), name, "='", value,
             "' (set by ", launcher.name, ") is not a non-negative integer");
  return static_cast<int>(number);
}

/// Slurm's tasks per node, "2(x3),1" (2 tasks on each of 3 nodes, then 1):
/// the tasks on node `node`.
int SlurmTasksOnNode(const Launcher& launcher, const char* name, const std::string& list,
                     int node) {
  std::stringstream items(list);
  std::string item;
  int first_node = 0;
  while (std::getline(items, item, ',')) {
    const size_t open = item.find("(x");
    const bool repeated = open != std::string::npos && item.back() == ')';
    const int tasks = ParseNumber(launcher, name, repeated ? item.substr(0, open) : item);
    const int nodes =
        repeated ? ParseNumber(launcher, name, item.substr(open + 2, item.size() - open - 3)) : 1;
    if (node < first_node + nodes) return tasks;
    first_node += nodes;
  }
  ThrowError(StrCat(name, "='", list, "' (set by Slurm) lists ", first_node,
                    " node(s), but SLURM_NODEID is ", node));
}

int LocalSize(const Launcher& launcher, const Environment& env) {
  if (const std::string* value = Find(env, launcher.local_size)) {
    return ParseNumber(launcher, launcher.local_size, *value);
  }
  if (std::string(launcher.name) != "Slurm") return 0;
  const std::string* node = Find(env, "SLURM_NODEID");
  for (const char* name : {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"}) {
    const std::string* list = Find(env, name);
    if (node != nullptr && list != nullptr) {
      return SlurmTasksOnNode(launcher, name, *list, ParseNumber(launcher, "SLURM_NODEID", *node));
    }
  }
  return 0;
}

/// What names this job (so that its ranks meet under one run id), or "".
std::string JobId(const Launcher& launcher, const Environment& env) {
  const std::string name = launcher.name;
  auto value = [&](const char* variable) {
    const std::string* found = Find(env, variable);
    return found == nullptr ? std::string() : *found;
  };
  if (name == "Open MPI") {
    const std::string job = value("OMPI_MCA_ess_base_jobid");
    return job.empty() ? value("PMIX_NAMESPACE") : job;
  }
  if (name == "Slurm") {
    const std::string job = value("SLURM_JOB_ID");
    const std::string step = value("SLURM_STEP_ID");
    // Each srun of a job is a step of its own, and a run of its own.
    return job.empty() || step.empty() ? job : StrCat(job, ".", step);
  }
  if (name == "torchrun") {
    // torchrun's default run id is "none", shared by every run.
    const std::string run = value("TORCHELASTIC_RUN_ID");
    return run == "none" ? std::string() : run;
  }
  return std::string();
}

}  // namespace

std::optional<LaunchEnv> ReadLaunchEnv(const Environment& env) {
  for (const Launcher& launcher : kLaunchers) {
    const std::string* rank = Find(env, launcher.rank);
    if (rank == nullptr) continue;
    const std::string* size = Find(env, launcher.size);
    DEMI_CHECK(size != nullptr, launcher.rank, " is set (by ", launcher.name, ") but ",
               launcher.size, " is not: set both, or give --rank and --world_size");
    LaunchEnv launch;
    launch.rank = ParseNumber(launcher, launcher.rank, *rank);
    launch.world_size = ParseNumber(launcher, launcher.size, *size);
    DEMI_CHECK(launch.world_size >= 1, launcher.size, "=0 (set by ", launcher.name,
               "): there must be at least one rank");
    DEMI_CHECK(launch.rank < launch.world_size, launcher.rank, "=", launch.rank, " (set by ",
               launcher.name, ") is not below ", launcher.size, "=", launch.world_size);
    if (const std::string* local_rank = Find(env, launcher.local_rank)) {
      launch.local_rank = ParseNumber(launcher, launcher.local_rank, *local_rank);
    }
    launch.local_size = LocalSize(launcher, env);
    DEMI_CHECK(launch.local_size == 0 || launch.local_rank < launch.local_size, launcher.local_rank,
               "=", launch.local_rank, " (set by ", launcher.name, ") is not below the ",
               launch.local_size, " rank(s) it says share this host");
    launch.source = launcher.name;
    launch.rank_variable = launcher.rank;
    launch.size_variable = launcher.size;
    launch.job_id = JobId(launcher, env);
    return launch;
  }
  return std::nullopt;
}

Environment ProcessEnvironment() {
  Environment env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t equals = text.find('=');
    if (equals != std::string::npos) env[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return env;
}

std::vector<int> GpusOfRank(const std::vector<int>& all_gpus, const LaunchEnv& launch) {
  const bool shared_host = launch.local_size > 1 || launch.local_rank > 0;
  if (!shared_host || all_gpus.empty()) return all_gpus;
  return {all_gpus[launch.local_rank % all_gpus.size()]};
}

int ThreadsOfRank(int visible_cores, int machine_cores, const LaunchEnv& launch) {
  if (launch.local_size <= 1 || visible_cores < machine_cores) return 0;
  return std::max(1, visible_cores / launch.local_size);
}

}  // namespace demi
