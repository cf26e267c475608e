#ifndef DEMI_PARALLEL_REPLICA_SYNC_HPP_
#define DEMI_PARALLEL_REPLICA_SYNC_HPP_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "demi/parallel/communicator.hpp"
#include "demi/solver.hpp"

namespace demi {

/// @brief Keeps one replica's solver in step with the others (data
/// parallelism): one ReplicaSync per replica, all over one communicator.
///
/// - Loss scaling: the net's loss is scaled by 1 / comm.size(), so summed
///   gradients are the gradient of the global batch's mean loss, and weight
///   decay, added after, is not scaled (the learning rate never is).
/// - As backward finishes a layer, the learnable params whose gradients are
///   then final (a shared param: after its first user) are queued, in that
///   reverse layer order, to a worker thread that all-reduces them while
///   backward goes on. OnGradientsReady waits for the rest.
/// - The displayed loss is the sum of the replicas' scaled losses (the
///   global batch's loss); stop and snapshot requests of any replica are
///   agreed on by all.
/// - Before every test and snapshot, computed params (BatchNorm's mean,
///   variance and scale factor) are averaged over the replicas.
/// Params with lr_mult 0 and params no layer back-propagates to are not
/// all-reduced: their update is zero anyway.
///
/// On a GPU, a layer's gradients are handed over once the compute stream
/// finished them; an NCCL communicator then reduces them in device memory,
/// any other through host memory.
class ReplicaSync : public Solver::Callback {
 public:
  /// Registers with `solver`; both must outlive this.
  ReplicaSync(Solver* solver, Communicator* comm);
  ~ReplicaSync() override;
  ReplicaSync(const ReplicaSync&) = delete;
  ReplicaSync& operator=(const ReplicaSync&) = delete;

  /// Copies replica 0's params (computed ones included) and update history
  /// to every replica.
  void BroadcastState();
  /// Averages the computed params over the replicas.
  void AverageComputedParams();

  /// Time in training steps (forward, backward, all-reduce) and the part of
  /// it spent waiting for all-reduces after backward ended.
  double step_seconds() const { return step_seconds_; }
  double wait_seconds() const { return wait_seconds_; }
  int steps() const { return steps_; }

  void OnStart() override;
  void OnLayerBackward(int layer_id) override;
  void OnGradientsReady() override;
  float ReduceLoss(float loss) override;
  SolverAction AgreeOnAction(SolverAction action) override;
  void OnBeforeTestOrSnapshot() override { AverageComputedParams(); }

 private:
  void PlanReductions();
  /// What to hand the communicator: device memory when it takes it.
  float* DataFor(Blob* blob);
  float* DiffFor(Blob* blob);
  void Enqueue(const std::vector<int>& params);
  void WorkerLoop();

  Solver* solver_;
  Communicator* comm_;
  /// Learnable params (indices into learnable_params) whose gradients are
  /// final once layer i's backward is done.
  std::vector<std::vector<int>> final_after_layer_;
  std::vector<Blob*> computed_params_;
  bool on_gpu_ = false;           ///< the solver trains on a GPU
  bool device_pointers_ = false;  ///< ... and the communicator reads its memory

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
};

}  // namespace demi

#endif  // DEMI_PARALLEL_REPLICA_SYNC_HPP_
