#ifndef DEMI_PARALLEL_REPLICAS_HPP_
#define DEMI_PARALLEL_REPLICAS_HPP_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "demi/parallel/communicator.hpp"
#include "demi/parallel/replica_sync.hpp"
#include "demi/parallel/thread_communicator.hpp"
#include "demi/proto/demi.pb.h"
#include "demi/solver.hpp"

namespace demi {

class GlooCommunicator;

/// How to replicate: replicas in this process (CPU threads or GPUs), and the
/// processes (ranks) that join through a rendezvous.
struct ReplicationOptions {
  int local_replicas = 1;         ///< replicas in this process (CPU when `gpus` is empty)
  std::vector<int> gpus;          ///< one replica per listed GPU, when not empty
  int world_size = 1;             ///< processes; each runs the same number of replicas
  int rank = 0;                   ///< this process, in [0, world_size)
  std::string rendezvous;         ///< file:///shared/dir or redis://host:port (world_size > 1)
  std::string host;               ///< address this process listens on; "" = its hostname
  std::string run_id = "demi";    ///< separates runs that share a rendezvous store
  double timeout_seconds = 1800;  ///< for joining and for every collective
  /// Gradients are all-reduced in buckets of about this many bytes
  /// (replica_sync.hpp); 0: one all-reduce per param.
  size_t bucket_bytes = size_t{25} << 20;
  /// Seconds between the rendezvous' "waiting for rank(s) ..." lines.
  double wait_log_seconds = 10;
  /// A stop signal's name ("SIGTERM") or "" (SignalHandler::GetStopFunction):
  /// while ranks meet and set up, a signal ends this process at once, naming
  /// whom it waited for, instead of after --comm_timeout. Empty: not polled.
  std::function<std::string()> stop_signal;
};

/// @brief Data-parallel training: one solver per replica, replicas of this
/// process on their own threads, processes joined by Gloo.
///
/// Replica r of R (r = rank * local_replicas + local index) reads shard r
/// of the training data; every replica starts from replica 0's params (its
/// initialization, --weights or snapshot, broadcast) and applies the same
/// averaged gradients, so the replicas stay equal. Replica 0 of rank 0
/// tests, logs progress and writes snapshots. Without a random_seed, rank 0
/// picks one for all, so data augmentation agrees across replicas.
///
/// With several ranks, a stop signal during the constructor (options'
/// stop_signal) ends it within a second: a CommError from the rendezvous
/// naming the ranks waited for, or, in the collectives of set-up, the
/// process exits with status 1 after one line (parallel/stop_watchdog.hpp).
///
/// Ranks that disagree stop in the constructor (a FingerprintMismatch on
/// every rank, naming the first difference): first on the build, replicas
/// per rank and solver (RunFingerprint), then, once the nets are built, on
/// the train net and its data shard layout (NetFingerprint). Solve checks
/// that every replica starts at the same iteration.
///
/// Backends: replicas of a process meet through threads (CPU) or NCCL (GPUs,
/// when built with USE_NCCL), processes through Gloo; NCCL spans processes
/// itself, its unique id travelling through the Gloo store.
class Replicas {
 public:
  Replicas(SolverParameter param, const ReplicationOptions& options);
  ~Replicas();
  Replicas(const Replicas&) = delete;
  Replicas& operator=(const Replicas&) = delete;

  /// Replicas in this process.
  int size() const { return static_cast<int>(solvers_.size()); }
  /// Replicas of all processes.
  int total() const { return comms_.front()->size(); }
  Solver& solver(int i) { return *solvers_[i]; }
  ReplicaSync& sync(int i) { return *syncs_[i]; }

  /// Copies weights into replica 0 (the broadcast in Solve spreads them).
  void CopyWeights(const std::string& paths);
  /// Trains every replica to max_iter (resuming each from `resume_file`, a
  /// .solverstate, if given). `action` (signals) is polled by replica 0 of
  /// this process; what it asks, every replica does.
  void Solve(const std::string& resume_file, std::function<SolverAction()> action = nullptr);
  /// Runs fn(i) for every replica i of this process at once, each on its own
  /// thread. A replica that throws aborts the others' collectives; the first
  /// error is rethrown once all threads ended (or, if one is stuck in a
  /// collective with another process, after a grace period: see below).
  void Run(const std::function<void(int replica)>& fn);
  /// True once Run gave up on a stuck replica thread, which still uses this
  /// object: the caller must end the process without destroying it.
  bool left_threads_running() const { return left_threads_running_; }
  /// One line: the share of step time spent waiting for all-reduces.
  std::string WaitSummary() const;

 private:
  void CheckOptions(int local) const;
  /// Joins the other processes over Gloo; they must agree on the run.
  void JoinProcesses(const SolverParameter& param, int local);
  /// A random seed (random_seed < 0) drawn once and shared by every rank.
  void AgreeOnRandomSeed(SolverParameter* param);
  /// One communicator per local replica: NCCL for GPUs (where built with
  /// it), else threads, under Gloo when there are several processes.
  void CreateCommunicators(int local);
  /// Local replica `i`'s solver, on its device, and its ReplicaSync.
  void CreateReplica(const SolverParameter& param, int i, int local);

  ReplicationOptions options_;
  std::unique_ptr<Communicator> global_;  ///< across processes (Gloo), or null
  GlooCommunicator* gloo_ = nullptr;      ///< global_, typed (its store joins NCCL)
  std::shared_ptr<ThreadGroup> group_;    ///< this process's replicas
  std::vector<std::unique_ptr<Communicator>> comms_;
  std::vector<std::unique_ptr<Solver>> solvers_;
  std::vector<std::unique_ptr<ReplicaSync>> syncs_;
  int blas_threads_before_ = 0;  ///< restored at the end (CPU replicas change it)
  int replica_threads_ = 0;      ///< OpenMP threads of each CPU replica (0: unchanged)
  bool left_threads_running_ = false;
};

}  // namespace demi

#endif  // DEMI_PARALLEL_REPLICAS_HPP_
