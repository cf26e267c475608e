// `train` (and `caffe train`): trains a net with a solver prototxt, in Caffe's log format:
//   train --solver=models/lenet/lenet_dummy_solver.prototxt
//   train --solver=... --snapshot=prefix_iter_1000.solverstate   (resume)
//   train --solver=... --weights=a.caffemodel,b.caffemodel      (fine-tune)
//   train --solver=... --gpu=all | --gpu=0,1 | --cpu_replicas=4  (data parallel)
//   train --solver=... --world_size=2 --rank=0 --rendezvous=file:///shared/dir
//                                        (one process per rank, on any hosts)
//   mpirun -np 2 train --solver=... --rendezvous=file:///shared/dir
//                                        (rank and world size from the launcher)
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "demi/engine_decision.hpp"
#include "demi/parallel/launch_env.hpp"
#include "demi/parallel/replicas.hpp"
#include "demi/solver.hpp"
#include "demi/solver_registry.hpp"
#include "demi/tools/batch_fit.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/tools/training_plot.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/device.hpp"
#include "demi/util/host_memory.hpp"
#include "demi/util/signal.hpp"
#include "demi/util/threads.hpp"

DEFINE_string(snapshot, "", "A .solverstate to resume training from.");
DEFINE_string(plot, "",
              "Keep an SVG of the training curves (displayed loss, test outputs) at this path, "
              "rewritten at every display and test.");
DEFINE_int32(cpu_replicas, 1,
             "Data-parallel replicas on the CPU in this process, each on its own thread "
             "and its own shard of the data (batch_size is per replica).");
DEFINE_int32(world_size, 1,
             "Processes training together (each with the same replicas). Default: from the "
             "launcher (mpirun, srun, torchrun, mpiexec), else 1; this flag, when given, wins.");
DEFINE_int32(rank, 0,
             "This process's rank in [0, world_size); rank 0 logs and snapshots. Default: from "
             "the launcher (mpirun, srun, torchrun, mpiexec), else 0; this flag, when given, "
             "wins.");
DEFINE_string(rendezvous, "",
              "Where the processes meet: file:///dir (a directory every rank can reach, "
              "e.g. on NFS) or redis://host:port. Required with more than one rank, also under "
              "a launcher.");
DEFINE_string(rendezvous_host, "",
              "Address other ranks reach this process at (default: this machine's hostname).");
DEFINE_string(run_id, "demi",
              "Distinguishes runs that share a rendezvous store; give each run its own. "
              "Under mpirun, srun or torchrun the default is the launcher's job id.");
DEFINE_double(comm_timeout, 1800,
              "Seconds a rank waits for the others to join or to take part in a collective "
              "before it fails.");
DEFINE_double(rendezvous_log_seconds, 10,
              "While ranks meet, each logs whom it still waits for this often (seconds).");
DEFINE_double(allreduce_bucket_mb, 25,
              "Replication: gradients are all-reduced in buckets of about this many MiB, each "
              "as soon as backward has finished it; 0: one all-reduce per param.");
DEFINE_bool(cuda_graph, false,
            "On GPUs, replay each training pass's forward and backward from CUDA graphs "
            "(captured on the second pass; bit-identical to running without). Given, it wins "
            "over the solver's cuda_graph.");
DEFINE_string(sigint_effect, "stop",
              "What SIGINT (Ctrl-C) does: snapshot, stop (snapshot if snapshot_after_train, "
              "then exit), snapshot_stop (snapshot, then exit) or none.");
DEFINE_string(sighup_effect, "snapshot",
              "What SIGHUP does: snapshot, stop, snapshot_stop or none.");
DEFINE_string(sigterm_effect, "snapshot_stop",
              "What SIGTERM (sent by timeout, Slurm, Kubernetes) does: snapshot_stop, stop, "
              "snapshot or none.");

namespace demi {

namespace {

/// Whether the command line set flag `name`. gflags also counts a flag the
/// program changed to a value other than its default: ask before changing.
bool FlagGiven(const char* name) { return !gflags::GetCommandLineFlagInfoOrDie(name).is_default; }

/// The launcher that started this process (mpirun, srun, ...), when --rank
/// or --world_size is left to it: fills in the flags not given (those given
/// win) and, unless --run_id is given, names the run after the job.
std::optional<LaunchEnv> TakeRanksFromLauncher() {
  const bool rank_given = FlagGiven("rank");
  const bool size_given = FlagGiven("world_size");
  if (rank_given && size_given) return std::nullopt;
  std::optional<LaunchEnv> launch = ReadLaunchEnv(ProcessEnvironment());
  if (!launch) return launch;
  if (!rank_given) FLAGS_rank = launch->rank;
  if (!size_given) FLAGS_world_size = launch->world_size;
  if (!FlagGiven("run_id") && !launch->job_id.empty()) FLAGS_run_id = "job-" + launch->job_id;
  LOG(INFO) << "Rank " << FLAGS_rank << " of " << FLAGS_world_size << " (rank from "
            << (rank_given ? "--rank" : launch->rank_variable) << ", world size from "
            << (size_given ? "--world_size" : launch->size_variable) << "; launcher "
            << launch->source << "), local rank " << launch->local_rank
            << (launch->local_size > 0 ? StrCat(" of ", launch->local_size, " on this host")
                                       : std::string())
            << ", run id " << FLAGS_run_id;
  return launch;
}

/// --threads, else OMP_NUM_THREADS, else the cores shared out among the
/// ranks a launcher put on this host.
int ChooseThreads(const std::optional<LaunchEnv>& launch) {
  if (FLAGS_threads != 0 || !launch || std::getenv("OMP_NUM_THREADS") != nullptr) {
    return FLAGS_threads;
  }
  const int threads =
      ThreadsOfRank(DefaultThreads(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), *launch);
  if (threads > 0) {
    LOG(INFO) << launch->local_size << " ranks share this host's cores: " << threads
              << " thread(s) each";
  }
  return threads;
}

/// --gpu's devices; under a launcher with several ranks on this host,
/// --gpu=all gives each rank one of them.
std::vector<int> ChooseGpus(const std::optional<LaunchEnv>& launch) {
  const std::vector<int> gpus = ParseGpuFlag(FLAGS_gpu);
  if (FLAGS_gpu != "all" || !launch) return gpus;
  const std::vector<int> mine = GpusOfRank(gpus, *launch);
  if (mine.size() < gpus.size()) {
    LOG(INFO) << "--gpu=all: local rank " << launch->local_rank << " takes GPU " << mine[0]
              << " of " << gpus.size();
  }
  return mine;
}

/// The device to train on: the one of `gpus`, else the solver's solver_mode:
/// GPU when a device exists.
Context ChooseContext(const SolverParameter& param, std::vector<int> gpus) {
  if (gpus.empty() && param.has_solver_mode() && param.solver_mode() == SolverParameter::GPU) {
    if (DeviceCount() > 0) {
      gpus.push_back(param.device_id());
    } else {
      LOG(WARNING) << FLAGS_solver << " asks for solver_mode: GPU, but no CUDA device is "
                   << "available; training on the CPU";
    }
  }
  Context context;
  if (gpus.empty()) {
    LOG(INFO) << "Training on the CPU";
  } else {
    context.device = Device::kGPU;
    context.device_id = gpus[0];
    SetCurrentDevice(gpus[0]);
    LOG(INFO) << "Training on GPU " << gpus[0];
  }
  return context;
}

/// Each CPU replica builds its nets and needs a share of the cores: far more
/// replicas than cores is a slip (1000 for 10) that would spend minutes
/// building nets only to train at a crawl.
void CheckReplicasFitCores(int replicas) {
  constexpr int kReplicasPerCore = 4;
  const int cores = std::max(1, omp_get_num_procs());
  DEMI_CHECK(
      replicas <= kReplicasPerCore * cores, "--cpu_replicas=", replicas, " is more than ",
      kReplicasPerCore, " times the ", cores,
      " core(s) this process may run on; give at most --cpu_replicas=", kReplicasPerCore * cores);
}

/// --memory_budget=auto: the train net at the largest batch that fits what
/// the machine has free (a share of it per replica of this process, and per
/// rank on this host when a launcher says how many), the global batch kept
/// through iter_size.
void FitToMemory(const std::vector<int>& gpus, const std::optional<LaunchEnv>& launch,
                 SolverParameter* param) {
  size_t available = 0;
  std::string limit;
  if (!gpus.empty() || (param->solver_mode() == SolverParameter::GPU && DeviceCount() > 0)) {
    // Every GPU holds one replica; the one with the least free memory decides.
    const std::vector<int> devices = gpus.empty() ? std::vector<int>{param->device_id()} : gpus;
    available = static_cast<size_t>(-1);
    for (int device : devices) {
      available = std::min(available, GetDeviceInfo(device).free_bytes);
    }
    limit = "free memory of the GPU with the least";
  } else {
    const HostMemory host = AvailableHostMemory();
    const int ranks_here = launch && launch->local_size > 1 ? launch->local_size : 1;
    const int sharers = FLAGS_cpu_replicas * ranks_here;
    available = host.bytes / static_cast<size_t>(sharers);
    limit = sharers > 1 ? StrCat(host.limit, ", shared by ", FLAGS_cpu_replicas, " replica(s) of ",
                                 ranks_here, " rank(s) on this host")
                        : host.limit;
  }
  DEMI_CHECK(available != static_cast<size_t>(-1),
             "--memory_budget=auto: no limit on this machine's memory could be read (cgroup, "
             "/proc/meminfo, ulimit -v); give --memory_budget in bytes");
  // A tenth and 256 MiB stay free for what the plan does not hold: the
  // data layers' prefetch, the test nets' inputs and outputs, the threads'
  // stacks and allocator arenas, the BLAS and oneDNN buffers.
  const size_t reserve = available / 10 + (size_t{256} << 20);
  DEMI_CHECK(available > reserve, "--memory_budget=auto: only ", available >> 20,
             " MiB are available (", limit, "), less than the ", reserve >> 20,
             " MiB kept free for the runtime");
  const size_t usable = available - reserve;
  FitSpec train = SolverTrainNet(*param, FLAGS_solver);
  // The test nets share the arena at their own batches: a floor under it.
  const TestArena tests = SolverTestArena(SolverTestNetSpecs(*param), train.strategy);
  train.arena_floor = tests.bytes;
  const AutoFit fit = ChooseAutoFit(train, usable, limit);
  LOG(INFO) << "--memory_budget=auto: " << (usable >> 20) << " MiB usable (of " << (available >> 20)
            << " MiB, " << limit << "): batch " << fit.batch << " x iter_size " << fit.iter_size
            << " (global batch " << fit.global_batch << ", written " << fit.written_batch << " x "
            << train.iter_size << "), "
            << (fit.memory_budget > 0 ? StrCat("recomputing under an arena budget of ",
                                               fit.memory_budget >> 20, " MiB")
                                      : std::string("no recomputation needed"))
            << "; needs " << (fit.needed_bytes >> 20) << " MiB";
  const bool batch_norm =
      std::any_of(train.param.layer().begin(), train.param.layer().end(),
                  [](const LayerParameter& layer) { return layer.type() == "BatchNorm"; });
  LOG_IF(WARNING, batch_norm && fit.batch != fit.written_batch)
      << "--memory_budget=auto: BatchNorm normalizes over each pass's batch, " << fit.batch
      << " now against " << fit.written_batch << " as written, and updates its statistics "
      << fit.iter_size << " time(s) per iteration against " << train.iter_size
      << ": the run trains otherwise than one at the written batch (give --memory_budget in "
      << "bytes to keep it)";
  ApplyAutoFit(fit, param);
}

int TrainReplicated(const SolverParameter& param, const std::vector<int>& gpus,
                    const SignalHandler& signals) {
  ReplicationOptions options;
  options.local_replicas = FLAGS_cpu_replicas;
  options.gpus = gpus;
  options.world_size = FLAGS_world_size;
  options.rank = FLAGS_rank;
  options.rendezvous = FLAGS_rendezvous;
  options.host = FLAGS_rendezvous_host;
  options.run_id = FLAGS_run_id;
  options.timeout_seconds = FLAGS_comm_timeout;
  DEMI_CHECK(FLAGS_rendezvous_log_seconds > 0, "--rendezvous_log_seconds must be positive, got ",
             FLAGS_rendezvous_log_seconds);
  options.wait_log_seconds = FLAGS_rendezvous_log_seconds;
  options.stop_signal = signals.GetStopFunction();
  DEMI_CHECK(FLAGS_allreduce_bucket_mb >= 0, "--allreduce_bucket_mb must not be negative, got ",
             FLAGS_allreduce_bucket_mb);
  options.bucket_bytes = static_cast<size_t>(FLAGS_allreduce_bucket_mb * 1024 * 1024);
  // Outside the try: unwinding to the handler must not destroy what a
  // replica thread stuck in a collective still uses.
  std::unique_ptr<Replicas> replicas;
  try {
    replicas = std::make_unique<Replicas>(param, options);
    if (!FLAGS_weights.empty()) replicas->CopyWeights(FLAGS_weights);
    LOG(INFO) << "Starting Optimization";
    replicas->Solve(FLAGS_snapshot, signals.GetActionFunction());
  } catch (...) {
    if (FLAGS_world_size == 1 && !(replicas && replicas->left_threads_running())) throw;
    // A replica thread may still be blocked in a collective with another
    // process: end the process now, which also tells the peers.
    LOG(ERROR) << "rank " << FLAGS_rank << " of " << FLAGS_world_size << ": "
               << DescribeToolError(std::current_exception());
    google::FlushLogFiles(google::GLOG_INFO);
    std::fflush(nullptr);
    std::_Exit(1);
  }
  return 0;
}

int Train() {
  DEMI_CHECK(!FLAGS_solver.empty(), "--solver is required: the solver prototxt to train with");
  DEMI_CHECK(FLAGS_snapshot.empty() || FLAGS_weights.empty(),
             "give --snapshot to resume training or --weights to fine-tune, not both");
  // First of all, so that a signal while the nets are built (or the ranks
  // meet) is kept for the solver, not lost or fatal.
  SignalHandler signals(ParseSolverAction(FLAGS_sigint_effect),
                        ParseSolverAction(FLAGS_sighup_effect),
                        ParseSolverAction(FLAGS_sigterm_effect));
  const std::optional<LaunchEnv> launch = TakeRanksFromLauncher();
  ApplyThreadsFlag(ChooseThreads(launch));
  SolverParameter param;
  ReadSolverParamsFromTextFile(FLAGS_solver, &param);
  SolverRegistry::CheckType(param.type(), FLAGS_solver);
  Engine engine;
  if (ParseEngineFlag(FLAGS_engine, &engine)) param.set_engine(engine);
  Type precision;
  if (ParsePrecisionFlag(FLAGS_precision, &precision)) param.set_precision(precision);
  ScheduleOrder schedule;
  if (ParseScheduleFlag(&schedule)) param.set_schedule(schedule);
  // --level and --stage set the state of every net the solver builds (Caffe's
  // train sets the train net's only), so that --stage=dummy runs a model zoo
  // solver, test nets included, without a dataset.
  const std::vector<std::string> stages = SplitList(FLAGS_stage);
  auto apply_flags = [&](NetState* state) {
    state->set_level(FLAGS_level);
    for (const std::string& stage : stages) state->add_stage(stage);
  };
  apply_flags(param.mutable_train_state());
  const int num_test_nets = std::max(param.test_iter_size(), param.test_state_size());
  while (param.test_state_size() < num_test_nets) param.add_test_state()->set_phase(TEST);
  for (NetState& state : *param.mutable_test_state()) apply_flags(&state);
  // --deterministic given wins over the solver's field; without either, TF32.
  if (!param.has_deterministic() || FlagGiven("deterministic")) {
    param.set_deterministic(FLAGS_deterministic);
  }
  if (FlagGiven("cuda_graph")) param.set_cuda_graph(FLAGS_cuda_graph);
  if (!FLAGS_snapshot.empty()) SeedFromSolverState(FLAGS_snapshot, &param);
  const std::vector<int> gpus = ChooseGpus(launch);
  DEMI_CHECK(FLAGS_cpu_replicas >= 1, "--cpu_replicas must be at least 1, got ",
             FLAGS_cpu_replicas);
  CheckReplicasFitCores(FLAGS_cpu_replicas);
  if (FLAGS_memory_budget == "auto") {
    FitToMemory(gpus, launch, &param);
  } else if (!FLAGS_memory_budget.empty()) {
    param.set_memory_budget(MemoryBudgetBytes());
  }
  std::unique_ptr<TrainingPlot> plot;
  if (!FLAGS_plot.empty()) plot = std::make_unique<TrainingPlot>(FLAGS_plot);
  DEMI_CHECK(gpus.empty() || FLAGS_cpu_replicas == 1, "give --gpu or --cpu_replicas, not both");
  DEMI_CHECK(FLAGS_world_size >= 1, "--world_size must be at least 1, got ", FLAGS_world_size);
  DEMI_CHECK(FLAGS_rank >= 0 && FLAGS_rank < FLAGS_world_size, "--rank=", FLAGS_rank,
             " is outside [0, ", FLAGS_world_size, ") for --world_size=", FLAGS_world_size);
  DEMI_CHECK(FLAGS_world_size == 1 || !FLAGS_rendezvous.empty(), "--rendezvous is required with ",
             FLAGS_world_size, " ranks", launch ? StrCat(" (started by ", launch->source, ")") : "",
             ": give file:///dir (a directory every rank can reach) or redis://host:port");
  if (gpus.size() > 1 || FLAGS_cpu_replicas > 1 || FLAGS_world_size > 1) {
    return TrainReplicated(param, gpus, signals);
  }
  const Context context = ChooseContext(param, gpus);
  std::unique_ptr<Solver> solver = SolverRegistry::Create(param, context);
  solver->SetActionFunction(signals.GetActionFunction());
  if (!FLAGS_weights.empty()) solver->CopyWeights(FLAGS_weights);
  LOG(INFO) << "Starting Optimization";
  solver->Solve(FLAGS_snapshot);
  return 0;
}

}  // namespace

Command TrainCommand() {
  Command command;
  command.name = "train";
  command.summary = "train or fine-tune a model";
  command.usage =
      "--solver=solver.prototxt [--snapshot=x.solverstate | "
      "--weights=a.caffemodel[,b.caffemodel]] [--gpu=0|0,1|all | --cpu_replicas=N] "
      "[[--world_size=W --rank=R] --rendezvous=file:///dir|redis://host:port] (rank and world "
      "size default to mpirun's, srun's or torchrun's) [--allreduce_bucket_mb=25] [--level=N] "
      "[--stage=a,b] [--schedule=search|prototxt] [--deterministic] [--cuda_graph] "
      "[--plot=curves.svg]";
  command.flags = {"solver",
                   "weights",
                   "snapshot",
                   "gpu",
                   "cpu_replicas",
                   "world_size",
                   "rank",
                   "rendezvous",
                   "rendezvous_host",
                   "run_id",
                   "comm_timeout",
                   "rendezvous_log_seconds",
                   "allreduce_bucket_mb",
                   "engine",
                   "precision",
                   "deterministic",
                   "cuda_graph",
                   "memory_budget",
                   "threads",
                   "level",
                   "stage",
                   "sigint_effect",
                   "sighup_effect",
                   "sigterm_effect",
                   "schedule",
                   "plot"};
  command.run = [](const std::vector<std::string>&) { return Train(); };
  return command;
}

}  // namespace demi
