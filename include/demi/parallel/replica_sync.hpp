#ifndef DEMI_PARALLEL_REPLICA_SYNC_HPP_
#define DEMI_PARALLEL_REPLICA_SYNC_HPP_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "demi/parallel/communicator.hpp"
#include "demi/solver.hpp"
#include "demi/util/stream_marker.hpp"

namespace demi {

/// @brief Keeps one replica's solver in step with the others (data
/// parallelism): one ReplicaSync per replica, all over one communicator.
///
/// - Loss scaling: the net's loss is scaled by 1 / comm.size(), so summed
///   gradients are the gradient of the global batch's mean loss, and weight
///   decay, added after, is not scaled (the learning rate never is).
/// - Gradients are all-reduced in buckets: contiguous ranges of the net's
///   diff block (param_block.hpp) of about `bucket_bytes`, cut from the last
///   param backwards (the order backward finishes them). Once backward has
///   finished every param of a bucket (a shared param: after its first
///   user), the bucket is queued to a worker thread that all-reduces it
///   while backward goes on; OnGradientsReady waits for the rest. Buckets
///   are queued in the same order on every replica, so the collectives
///   match (the in-process communicator sums each float in replica order,
///   so its result does not depend on the buckets). bucket_bytes 0: one
///   collective per param.
/// - The displayed loss is the sum of the replicas' scaled losses (the
///   global batch's loss); stop and snapshot requests of any replica are
///   agreed on by all.
/// - Before every test and snapshot, computed params (BatchNorm's mean,
///   variance and scale factor) are averaged over the replicas.
/// - Before every test and snapshot (a snapshot may come during a test,
///   when the root runs alone), each replica's data read positions are
///   gathered on the root (every replica broadcasts its own in turn), which
///   writes them all into the .solverstate.
/// Params with lr_mult 0 and params no layer back-propagates to are not
/// all-reduced: their update is zero anyway.
///
/// On a GPU with NCCL (a communicator that queues collectives), each bucket
/// is queued from the backward hook behind the backward the solver's stream
/// holds, on NCCL's own high-priority stream, in device memory: nothing on
/// the host waits for it. At OnGradientsReady the solver's stream waits for
/// the reductions on the device (the update queued next runs after them).
/// The worker thread waits for each on the host from when it is queued,
/// only to turn a failure or the timeout into a CommError, thrown at the
/// step's end or the next one's start. With any other communicator, a
/// layer's gradients are handed to the worker once the compute stream
/// finished them, and reduced through host memory.
///
/// Nothing of the above happens before Attach: until then the solver
/// trains alone, and only BroadcastState and AverageComputedParams reach
/// the other replicas (pycaffe's NCCL is built first and attached by
/// solver.add_callback; Replicas attaches at once).
class ReplicaSync : public Solver::Callback {
 public:
  /// About 25 MiB, PyTorch DDP's default: few collectives, and the first
  /// one starts early in backward.
  static constexpr size_t kDefaultBucketBytes = size_t{25} << 20;

  /// Plans the buckets of `solver`'s net; both must outlive this, and
  /// `comm`'s rank must be the solver's context.replica.
  ReplicaSync(Solver* solver, Communicator* comm, size_t bucket_bytes = kDefaultBucketBytes);
  ~ReplicaSync() override;
  ReplicaSync(const ReplicaSync&) = delete;
  ReplicaSync& operator=(const ReplicaSync&) = delete;

  /// Scales the net's loss and registers with the solver, so that its
  /// iterations all-reduce. Once: a second call does nothing.
  void Attach();

  /// Copies replica 0's params (computed ones included) and update history
  /// to every replica.
  void BroadcastState();
  /// Averages the computed params over the replicas.
  void AverageComputedParams();

  /// Time in training steps (forward, backward, all-reduce) and the part of
  /// it the host spent waiting for all-reduces after backward ended (none
  /// where the collectives are queued: the device waits).
  double step_seconds() const { return step_seconds_; }
  double wait_seconds() const { return wait_seconds_; }
  int steps() const { return steps_; }
  /// Gradient all-reduces issued over all steps, and the buckets planned.
  int64_t collectives() const { return collectives_; }
  /// Buckets the backward hook has handed over (queued) over all steps.
  int64_t handed_over() const { return handed_over_; }
  int num_buckets() const { return static_cast<int>(buckets_.size()); }
  /// Whether the collectives are queued on the device (NCCL), not waited for.
  bool queues() const { return queues_; }

  void OnStart() override;
  void OnLayerBackward(int layer_id) override;
  /// Whether a bucket is complete after layer `layer_id`'s backward.
  bool HandsOverAfter(int layer_id) const override { return hands_over_after_[layer_id]; }
  void OnGradientsReady() override;
  float ReduceLoss(float loss) override;
  void ReduceOutputs(std::vector<float>* values) override;
  bool AgreeOnOverflow(bool overflow) override;
  SolverAction AgreeOnAction(SolverAction action) override;
  void OnBeforeTestOrSnapshot() override { AverageComputedParams(); }
  SolverState GatherReplicaStates(SolverState state) override;

 private:
  /// A range of the diff block reduced by one collective: the learnable
  /// params in it, by index, and how many of them backward finishes.
  struct Bucket {
    int64_t offset = 0;
    int64_t count = 0;
    std::vector<int> params;
    int reduced_params = 0;
  };

  void PlanReductions();
  /// For each learnable param, the layer after whose backward its gradient
  /// is final, or -1 when it is not reduced (lr_mult 0, no backward).
  std::vector<int> FinalLayers() const;
  void PlanBuckets(const std::vector<int>& final_layer);
  /// hands_over_after_, from the buckets and the order backward runs.
  void PlanHandOvers();
  /// What to hand the communicator: device memory when it takes it.
  float* DataFor(Blob* blob);
  float* DiffFor(Blob* blob);
  void Enqueue(const std::vector<int>& buckets);
  /// The first float of bucket `b`'s range where the communicator reads it.
  float* BucketStart(int b);
  /// All-reduces bucket `b`, or waits for the oldest queued one (kWatch),
  /// on the worker thread.
  void Reduce(int b);
  /// Rethrows the worker's error.
  void ThrowIfFailed();
  static constexpr int kWatch = -1;
  void WorkerLoop();

  Solver* solver_;
  Communicator* comm_;
  size_t bucket_bytes_;
  std::vector<Bucket> buckets_;
  /// For each learnable param, its bucket (-1: not reduced).
  std::vector<int> bucket_of_param_;
  /// Learnable params (indices into learnable_params) whose gradients are
  /// final once layer i's backward is done.
  std::vector<std::vector<int>> final_after_layer_;
  /// Per bucket, its params backward has yet to finish this iteration.
  std::vector<int> pending_;
  /// Per layer, whether a bucket is complete after its backward.
  std::vector<bool> hands_over_after_;
  /// GPU: per bucket, the point of backward's stream after which its
  /// gradients are final (recorded by the solver's thread, waited for by
  /// the worker).
  std::vector<std::unique_ptr<StreamMarker>> bucket_ready_;
  std::vector<Blob*> computed_params_;
  bool attached_ = false;
  bool on_gpu_ = false;           ///< the solver trains on a GPU
  bool device_pointers_ = false;  ///< ... and the communicator reads its memory
  bool queues_ = false;           ///< the communicator queues collectives (NCCL)

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<int> queue_;
  int in_flight_ = 0;
  bool shutdown_ = false;
  std::exception_ptr error_;
  std::thread worker_;

  std::chrono::steady_clock::time_point step_start_;
  double step_seconds_ = 0;
  double wait_seconds_ = 0;
  int steps_ = 0;
  int64_t collectives_ = 0;  ///< written under mutex_ (by the worker, or where queued)
  int64_t handed_over_ = 0;  ///< by OnLayerBackward, on the solver's thread
};

}  // namespace demi

#endif  // DEMI_PARALLEL_REPLICA_SYNC_HPP_
