#ifndef DEMI_PARALLEL_GLOO_COMMUNICATOR_HPP_
#define DEMI_PARALLEL_GLOO_COMMUNICATOR_HPP_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "demi/parallel/communicator.hpp"

namespace demi {

struct GlooOptions {
  int rank = 0;
  int world_size = 1;
  /// Where ranks meet: "file:///shared/dir" (a directory every rank can
  /// read and write, created if missing) or "redis://host[:port]" (port
  /// 6379 by default).
  std::string rendezvous;
  /// Address this rank listens on; "" = this machine's hostname.
  std::string host;
  /// Limit for the rendezvous, every store wait and every collective.
  double timeout_seconds = 300;
  /// Prefix of every key this run writes to the store. Each run sharing a
  /// store (directory or Redis) needs its own run_id, or a fresh directory.
  std::string run_id = "demi";
  /// While waiting for peers in the rendezvous, log whom every this many
  /// seconds ("waiting for rank(s) 1, 3 to join (20 s of 1800)").
  double wait_log_seconds = 10;
  /// Polled while waiting for peers in the rendezvous: a signal's name
  /// ("SIGTERM") ends the wait at once with a CommError naming the ranks
  /// waited for; "" waits on. Empty function: never stops.
  std::function<std::string()> stop_signal;
  /// What error messages call the options above, in the fixes they
  /// suggest: tools/train's flags, unless the caller's words differ
  /// (pycaffe's NCCL: its uid, set_solver_count...).
  struct Names {
    std::string rendezvous = "--rendezvous";
    std::string run_id = "--run_id";
    std::string world_size = "--world_size";
    std::string host = "--rendezvous_host";
    std::string timeout = "--comm_timeout";
  } names;
};

/// @brief Communicator over Gloo's TCP transport: the members are processes,
/// on one host or many, one rank each.
///
/// How ranks meet: every rank writes a "joined" key to the store under
/// `run_id`, waits for all the others' keys, then publishes its listening
/// addresses through the same store and connects to every other rank (a
/// full mesh). The constructor returns once all connections stand.
///
/// AllReduceSum uses Gloo's ring algorithm: each chunk is summed once along
/// the ring and then copied to every rank, so all ranks hold bit-identical
/// results. Broadcast and Barrier are Gloo's.
///
/// Stale keys: a rank whose own "joined" key already exists stops with a
/// CommError, since an earlier run (or a second process started with the
/// same rank) left it there; so a store reused across runs needs a new
/// run_id (or directory) per run. Keys are never deleted.
///
/// Timeouts and errors: each wait in the rendezvous and each collective is
/// limited to timeout_seconds. A rank that does not join, a peer that exits
/// or stops answering, or a store that cannot be reached throws CommError
/// naming the operation, this rank and the likely cause; Gloo's own
/// exceptions never escape. After a failed collective the communicator is
/// broken and every later call throws CommError at once. Bad options throw
/// Error before anything is connected. A stop signal (stop_signal) ends a
/// rendezvous wait within a poll (10 ms); the waits log whom they wait for.
///
/// The constructor sets SIGPIPE to be ignored (if it had its default
/// action): Gloo writes to sockets whose peer may have exited, and the
/// signal would otherwise kill this process instead of raising an error.
///
/// Not thread-safe: one thread calls the collectives, in the same order on
/// every rank.
class GlooCommunicator : public Communicator {
 public:
  explicit GlooCommunicator(const GlooOptions& options);
  ~GlooCommunicator() override;

  int rank() const override { return options_.rank; }
  int size() const override { return options_.world_size; }
  const char* backend() const override { return "gloo"; }

  void AllReduceSum(float* data, size_t count) override;
  void Broadcast(void* data, size_t bytes, int root) override;
  void Barrier() override;

  /// Small values through the store (e.g. NCCL's unique id). Each key may be
  /// set once per run.
  void StoreSet(const std::string& key, const std::string& value);
  /// Waits up to the timeout for `key` to be set, then returns its value.
  std::string StoreGet(const std::string& key);

 private:
  struct State;
  // The constructor's steps: open the rendezvous store, join (refusing a
  // stale key of this rank), connect Gloo's full mesh, wait for every rank.
  void OpenStore();
  void Join();
  void ConnectMesh();
  void WaitUntilEveryRankIsConnected();
  /// Throws if a peer left a refusal in the store (its key was stale).
  void StopIfAPeerWasRefused();
  /// Called at every poll of a rendezvous wait for `keys` (of either
  /// store) after `waited` seconds: stops on a refused peer or a stop
  /// signal, and logs whom it waits for when `report` is set.
  void WhileWaiting(const std::vector<std::string>& keys, double waited, bool report);
  /// " ([addr]:port is rank 3)" for each peer address `text` (a Gloo error)
  /// holds; failing that, " ([addr] is rank 1 or 2)" for the ranks on a host
  /// it names; else "".
  std::string NamePeers(const std::string& text) const;
  /// The ranks of the keys still missing ("1, 3") and what they are awaited
  /// for ("to join").
  std::string DescribeMissing(const std::vector<std::string>& keys) const;

  /// Runs `op` (a Gloo call), turning any exception into a CommError that
  /// names `what` and marking the communicator broken.
  template <typename Op>
  void Run(const std::string& what, Op op);

  GlooOptions options_;
  std::unique_ptr<State> state_;
  bool broken_ = false;
};

}  // namespace demi

#endif  // DEMI_PARALLEL_GLOO_COMMUNICATOR_HPP_
