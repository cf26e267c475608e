// pycaffe's NCCL: this process's solver, one rank of a data-parallel run of
// processes (Caffe's python/train.py), joined to the others' through Gloo,
// and through an NCCL clique too between GPUs where the build has NCCL.
// demitasse.NCCL (python/demitasse/parallel.py) gives it pycaffe's API.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "demi/parallel/gloo_communicator.hpp"
#include "demi/parallel/nccl_communicator.hpp"
#include "demi/parallel/replica_sync.hpp"
#include "demi/parallel/training_fingerprint.hpp"
#include "demi/solver.hpp"

namespace demi {
namespace python {

namespace {

using SolverPtr = std::shared_ptr<Solver>;

/// How to fix ranks that disagree when they join.
constexpr const char* kDisagreeHint =
    "build every rank's solver from the same solver and net files, after the same "
    "set_solver_count and set_random_seed calls";

/// One rank: its solver, the communicators, and the ReplicaSync over them,
/// attached to the solver only by Attach (pycaffe's add_callback).
class ProcessReplica {
 public:
  /// Joins the `count` ranks meeting at `uid` (a rendezvous: file:///dir or
  /// redis://host:port) as rank `rank`; every rank must have built the same
  /// solver and net. `stop` is polled while waiting for peers to join (a
  /// signal's name ends the wait).
  ProcessReplica(SolverPtr solver, const std::string& uid, int rank, int count,
                 double timeout_seconds, const std::string& run_id,
                 std::function<std::string()> stop)
      : solver_(std::move(solver)),
        who_(StrCat("caffe.NCCL rank ", rank, " of ", count, " (uid '", uid, "')")) {
    Named([&] { Join(uid, rank, count, timeout_seconds, run_id, std::move(stop)); });
  }

  ~ProcessReplica() {
    sync_.reset();
#ifdef USE_NCCL
    if (nccl_) NcclCommunicator::FinalizeClique({static_cast<NcclCommunicator*>(nccl_.get())});
#endif
  }

  /// bcast(): rank 0's params and update history to every rank, once all
  /// agree on the iteration (a rank restored from another snapshot would
  /// step out of turn).
  void Broadcast() {
    Named([&] {
      AgreeOnFingerprint(communicator(), {{"iteration", StrCat(solver_->iter())}}, "rank",
                         "restore every rank from the same .solverstate before bcast()");
      sync_->BroadcastState();
    });
  }

  /// add_callback(nccl): from now on, the solver's iterations all-reduce.
  void Attach(const SolverPtr& solver) {
    DEMI_CHECK(solver.get() == solver_.get(), who_,
               ": add_callback was given another solver than the one this NCCL was built "
               "for; pass the NCCL object to its own solver's add_callback");
    sync_->Attach();
  }

  const char* backend() const { return communicator()->backend(); }

 private:
  void Join(const std::string& uid, int rank, int count, double timeout_seconds,
            const std::string& run_id, std::function<std::string()> stop) {
    const Context& context = solver_->context();
    DEMI_CHECK(context.replica == rank && context.num_replicas == count,
               "the solver was built as replica ", context.replica, " of ", context.num_replicas,
               "; call set_solver_count and set_solver_rank before "
               "building the solver, then NCCL(solver, uid)");
    DEMI_CHECK(timeout_seconds > 0, "the timeout must be positive, got ", timeout_seconds, " s");
    GlooOptions options;
    options.rank = rank;
    options.world_size = count;
    options.rendezvous = uid;
    options.timeout_seconds = timeout_seconds;
    options.run_id = run_id;
    options.stop_signal = std::move(stop);
    options.names = {"uid", "run_id", "set_solver_count", "host name", "NCCL's timeout"};
    gloo_ = std::make_unique<GlooCommunicator>(options);
    // As tools/train's ranks (Replicas::JoinProcesses): ranks that disagree
    // on the run stop here, naming the difference, instead of hanging or
    // training apart in a collective.
    const bool gpu = context.device == Device::kGPU;
    Fingerprint run = RunFingerprint(solver_->param(), gpu ? "1 GPU(s)" : "1 on the CPU");
    run.push_back({"all-reduce bucket bytes", StrCat(ReplicaSync::kDefaultBucketBytes)});
    AgreeOnFingerprint(gloo_.get(), run, "rank", kDisagreeHint);
    AgreeOnFingerprint(gloo_.get(), NetFingerprint(solver_->net()), "rank", kDisagreeHint);
#ifdef USE_NCCL
    if (gpu) {
      auto clique = NcclCommunicator::CreateClique(
          {context.device_id}, rank, count, gloo_.get(),
          std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
      nccl_ = std::move(clique.front());
    }
#endif
    sync_ = std::make_unique<ReplicaSync>(solver_.get(), communicator());
  }

  Communicator* communicator() const {
    return nccl_ ? nccl_.get() : static_cast<Communicator*>(gloo_.get());
  }

  /// Runs `body`; an Error it throws is rethrown naming this rank and uid.
  template <typename Body>
  void Named(Body body) {
    try {
      body();
    } catch (const Error& error) {
      ThrowError(StrCat(who_, ": ", error.what()));
    }
  }

  SolverPtr solver_;  // first: outlives the ReplicaSync registered with it
  std::string who_;
  std::unique_ptr<GlooCommunicator> gloo_;
  /// A GPU solver's member of the NCCL clique (builds with NCCL), else null:
  /// then gradients go through Gloo, from host memory.
  std::unique_ptr<Communicator> nccl_;
  std::unique_ptr<ReplicaSync> sync_;
};

/// Builds a ProcessReplica without the GIL (joining waits for the other
/// ranks); Ctrl-C meanwhile ends the wait and raises KeyboardInterrupt.
std::unique_ptr<ProcessReplica> JoinRanks(SolverPtr solver, const std::string& uid, int rank,
                                          int count, double timeout_seconds,
                                          const std::string& run_id) {
  bool interrupted = false;
  auto stop = [&interrupted]() -> std::string {
    if (!interrupted) {
      py::gil_scoped_acquire gil;
      interrupted = PyErr_CheckSignals() != 0;
    }
    return interrupted ? "SIGINT" : "";
  };
  try {
    py::gil_scoped_release release;
    return std::make_unique<ProcessReplica>(std::move(solver), uid, rank, count, timeout_seconds,
                                            run_id, stop);
  } catch (const Error&) {
    if (interrupted) throw py::error_already_set();
    throw;
  }
}

}  // namespace

void DefineReplica(py::module_& module) {
  py::class_<ProcessReplica>(module, "_ProcessReplica",
                             "One rank of a multi-process run; demitasse.NCCL wraps it.")
      .def(py::init(&JoinRanks), py::arg("solver"), py::arg("uid"), py::arg("rank"),
           py::arg("count"), py::arg("timeout"), py::arg("run_id"))
      .def("broadcast", &ProcessReplica::Broadcast, py::call_guard<py::gil_scoped_release>())
      .def("attach", &ProcessReplica::Attach, py::arg("solver"))
      .def_property_readonly("backend", &ProcessReplica::backend);
}

}  // namespace python
}  // namespace demi
