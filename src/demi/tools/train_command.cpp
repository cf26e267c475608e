// `train` (and `caffe train`): trains a net with a solver prototxt, in Caffe's log format:
//   train --solver=models/lenet/lenet_dummy_solver.prototxt
//   train --solver=... --snapshot=prefix_iter_1000.solverstate   (resume)
//   train --solver=... --weights=a.caffemodel,b.caffemodel      (fine-tune)
//   train --solver=... --gpu=all | --gpu=0,1 | --cpu_replicas=4  (data parallel)
//   train --solver=... --world_size=2 --rank=0 --rendezvous=file:///shared/dir
//                                        (one process per rank, on any hosts)
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "demi/parallel/replicas.hpp"
#include "demi/solver.hpp"
#include "demi/solver_registry.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/byte_size.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/device.hpp"
#include "demi/util/engine.hpp"
#include "demi/util/signal.hpp"

DEFINE_string(snapshot, "", "A .solverstate to resume training from.");
DEFINE_int32(cpu_replicas, 1,
             "Data-parallel replicas on the CPU in this process, each on its own thread "
             "and its own shard of the data (batch_size is per replica).");
DEFINE_int32(world_size, 1, "Processes training together (each with the same replicas).");
DEFINE_int32(rank, 0, "This process's rank in [0, world_size); rank 0 logs and snapshots.");
DEFINE_string(rendezvous, "",
              "Where the processes meet: file:///dir (a directory every rank can reach, "
              "e.g. on NFS) or redis://host:port.");
DEFINE_string(rendezvous_host, "",
              "Address other ranks reach this process at (default: this machine's hostname).");
DEFINE_string(run_id, "demi",
              "Distinguishes runs that share a rendezvous store; give each run its own.");
DEFINE_double(comm_timeout, 1800,
              "Seconds a rank waits for the others to join or to take part in a collective "
              "before it fails.");
DEFINE_double(allreduce_bucket_mb, 25,
              "Replication: gradients are all-reduced in buckets of about this many MiB, each "
              "as soon as backward has finished it; 0: one all-reduce per param.");
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

/// The device to train on: --gpu, else the solver's solver_mode: GPU when a
/// device exists.
Context ChooseContext(const SolverParameter& param) {
  std::vector<int> gpus = ParseGpuFlag(FLAGS_gpu);
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

int TrainReplicated(const SolverParameter& param, const std::vector<int>& gpus,
                    std::function<SolverAction()> action) {
  ReplicationOptions options;
  options.local_replicas = FLAGS_cpu_replicas;
  options.gpus = gpus;
  options.world_size = FLAGS_world_size;
  options.rank = FLAGS_rank;
  options.rendezvous = FLAGS_rendezvous;
  options.host = FLAGS_rendezvous_host;
  options.run_id = FLAGS_run_id;
  options.timeout_seconds = FLAGS_comm_timeout;
  DEMI_CHECK(FLAGS_allreduce_bucket_mb >= 0, "--allreduce_bucket_mb must not be negative, got ",
             FLAGS_allreduce_bucket_mb);
  options.bucket_bytes = static_cast<size_t>(FLAGS_allreduce_bucket_mb * 1024 * 1024);
  try {
    Replicas replicas(param, options);
    if (!FLAGS_weights.empty()) replicas.CopyWeights(FLAGS_weights);
    LOG(INFO) << "Starting Optimization";
    replicas.Solve(FLAGS_snapshot, std::move(action));
  } catch (...) {
    if (FLAGS_world_size == 1) throw;
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
  const SolverAction sigint_effect = ParseSolverAction(FLAGS_sigint_effect);
  const SolverAction sighup_effect = ParseSolverAction(FLAGS_sighup_effect);
  const SolverAction sigterm_effect = ParseSolverAction(FLAGS_sigterm_effect);
  ApplyThreadsFlag(FLAGS_threads);
  SolverParameter param;
  ReadSolverParamsFromTextFile(FLAGS_solver, &param);
  Engine engine;
  if (ParseEngineFlag(FLAGS_engine, &engine)) param.set_engine(engine);
  if (!FLAGS_memory_budget.empty()) {
    param.set_memory_budget(ParseByteSize(FLAGS_memory_budget, "--memory_budget"));
  }
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
  SignalHandler signals(sigint_effect, sighup_effect, sigterm_effect);
  const std::vector<int> gpus = ParseGpuFlag(FLAGS_gpu);
  DEMI_CHECK(FLAGS_cpu_replicas >= 1, "--cpu_replicas must be at least 1, got ",
             FLAGS_cpu_replicas);
  DEMI_CHECK(gpus.empty() || FLAGS_cpu_replicas == 1, "give --gpu or --cpu_replicas, not both");
  DEMI_CHECK(FLAGS_world_size >= 1, "--world_size must be at least 1, got ", FLAGS_world_size);
  DEMI_CHECK(FLAGS_rank >= 0 && FLAGS_rank < FLAGS_world_size, "--rank=", FLAGS_rank,
             " is outside [0, ", FLAGS_world_size, ") for --world_size=", FLAGS_world_size);
  if (gpus.size() > 1 || FLAGS_cpu_replicas > 1 || FLAGS_world_size > 1) {
    return TrainReplicated(param, gpus, signals.GetActionFunction());
  }
  const Context context = ChooseContext(param);
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
      "[--world_size=W --rank=R --rendezvous=file:///dir|redis://host:port] [--level=N] "
      "[--stage=a,b]";
  command.flags = {"solver",          "weights",       "snapshot",      "gpu",
                   "cpu_replicas",    "world_size",    "rank",          "rendezvous",
                   "rendezvous_host", "run_id",        "comm_timeout",  "engine",
                   "memory_budget",   "threads",       "level",         "stage",
                   "sigint_effect",   "sighup_effect", "sigterm_effect"};
  command.run = [](const std::vector<std::string>&) { return Train(); };
  return command;
}

}  // namespace demi
