#ifndef DEMI_SOLVER_HPP_
#define DEMI_SOLVER_HPP_

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "demi/blob.hpp"
#include "demi/common.hpp"
#include "demi/loss_scaler.hpp"
#include "demi/net.hpp"
#include "demi/pending_losses.hpp"
#include "demi/proto/demi.pb.h"
#include "demi/solver_param.hpp"
#include "demi/solvers/update_kernels.hpp"
#include "demi/step_graph.hpp"
#include "demi/util/file_lock.hpp"
#include "demi/util/signal.hpp"

namespace demi {

/// Whether forward in TRAIN changes `layer`'s blobs: BatchNorm's statistics,
/// which no gradient touches (replicas average them; an abandoned iteration
/// puts them back).
bool HasComputedParams(const Layer& layer);

/// For a resume from `state_file` by a solver without random_seed: sets
/// `param`'s random_seed to the seed the run that wrote the state drew, so
/// that the nets built next shuffle and augment the data as that run's did.
/// Returns whether it did (a state from before such seeds were kept has none).
bool SeedFromSolverState(const std::string& state_file, SolverParameter* param);

/// @brief Trains a net: the loop, testing, display, snapshots, signals,
/// gradient accumulation (iter_size), clipping, regularization and learning
/// rate policies live here; subclasses (solvers/*.hpp) only turn a param's
/// regularized gradient into the step to subtract.
///
/// One iteration: clear param diffs; test if due; iter_size times
/// ForwardBackward; divide the diffs by iter_size (and the loss scale, when
/// the net scales its loss: loss_scaler.hpp; an overflow skips the rest);
/// clip them to a global L2
/// norm of clip_gradients (after the division, unlike Caffe, so that
/// iter_size k at batch b matches batch k * b); add weight decay (L2:
/// wd * decay_mult * w; L1: wd * decay_mult * sign(w)); the rule's step
/// (param, lr); data -= step; poll for signals; snapshot if due.
///
/// Signals during an iteration of iter_size > 1 are polled between its
/// passes too (a long iteration would otherwise hold a stop for minutes). A
/// request that stops abandons the iteration: the partial gradient sum is
/// discarded and the state is put back as it was when the iteration began
/// (iter, params, history, BatchNorm's statistics and every train layer's
/// random stream), so a snapshot taken then (snapshot_stop, or
/// snapshot_after_train on a stop) holds the start of that iteration, and a
/// resume recomputes it and trains on bit-identical to an uninterrupted run
/// (the train net's data layers are moved back to where that iteration began
/// reading). A request that only snapshots is kept and served at the end of
/// the iteration.
///
/// The update runs on the net's param block (param_block.hpp), history in
/// the same layout: one memset clears the diffs, and one threaded pass over
/// a table of rows (offset, count, rate, decay) regularizes, computes the
/// steps and subtracts them; on a GPU one fused kernel per update rule does
/// that pass, so params, gradients and history stay on the device. Every
/// float goes through the same operations in the same order as a per-param
/// update would, so results do not depend on the threads.
///
/// A NaN or infinite loss stops training with an Error naming the iteration.
/// With debug_info the forward pass runs layer by layer and the Error also
/// names the first layer whose top held a non-finite value.
///
/// Test nets share the train net's params (ShareTrainedLayersWith) and its
/// memory arena. Snapshots write `<prefix>_iter_<N>.caffemodel` (the train
/// net with its params, BatchNorm statistics included) and
/// `<prefix>_iter_<N>.solverstate` (iteration, lr step, the model's path,
/// history blobs, the text state of every layer's random engine: the
/// train net's layers in order, then each test net's; and every data layer's
/// read position, of each replica's train net and of the test nets), each
/// written to a temporary file and renamed. Restoring both makes a resumed
/// run bit-identical to an uninterrupted one, with real data as with
/// DummyData (whose draws are its random stream).
class Solver {
 public:
  /// Hooks into the loop; replication (parallel/replica_sync.hpp) uses them
  /// to all-reduce gradients and agree on what to do. Every replica calls
  /// them at the same points of the same iterations.
  class Callback {
   public:
    virtual ~Callback() = default;
    /// Before the forward passes of an iteration.
    virtual void OnStart() {}
    /// In the last backward pass of an iteration, after layer `layer_id`.
    virtual void OnLayerBackward(int layer_id) {}
    /// Whether OnLayerBackward(layer_id) hands gradients over to be
    /// reduced while backward goes on (replication: a bucket is then
    /// complete). A backward replayed from CUDA graphs ends a graph there,
    /// so the hand-off comes as early as without graphs.
    virtual bool HandsOverAfter(int layer_id) const { return false; }
    /// After the backward passes, before the update.
    virtual void OnGradientsReady() {}
    /// The iteration's loss as displayed (replication: the global batch's).
    virtual float ReduceLoss(float loss) { return loss; }
    /// The train net's output values as displayed, every replica's at once
    /// (replication: their means over the replicas, the global batch's).
    virtual void ReduceOutputs(std::vector<float>* values) {}
    /// What every replica does after an iteration or a test (stop,
    /// snapshot) given this replica's request.
    virtual SolverAction AgreeOnAction(SolverAction action) { return action; }
    /// Whether any replica's gradients overflowed, given this one's (loss
    /// scaling: every replica then skips the step).
    virtual bool AgreeOnOverflow(bool overflow) { return overflow; }
    /// Before a test pass or a snapshot (replication averages BatchNorm's
    /// statistics here).
    virtual void OnBeforeTestOrSnapshot() {}
    /// After OnBeforeTestOrSnapshot, on every replica of a replicated run
    /// (a snapshot may come during the test, when the root runs alone):
    /// given this replica's part of a snapshot (its train net's data read
    /// positions and random streams), returns every replica's parts merged
    /// on the root (gathered there) and anything on the others.
    virtual SolverState GatherReplicaStates(SolverState state) { return state; }
  };

  virtual ~Solver() = default;
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  /// Trains until max_iter (resuming from `resume_file`, a .solverstate, if
  /// given), snapshots if snapshot_after_train, then shows and tests the
  /// final state as Caffe does.
  void Solve(const std::string& resume_file = "");
  /// Runs `iters` iterations, or fewer if a stop is requested.
  void Step(int iters);
  /// One update of the params from the gradients they hold (this
  /// iteration's lr, regularization, clipping and rule), without a forward
  /// or backward pass and without advancing the iteration: pycaffe's
  /// apply_update, for gradients computed by hand.
  void ApplyUpdate();
  /// Runs every test net; returns each net's mean outputs (Test's result).
  std::vector<std::vector<float>> TestAll();
  /// Runs test net `test_net_id` for its test_iter batches and logs the mean
  /// of every output element; returns those means (empty if interrupted).
  std::vector<float> Test(int test_net_id);
  /// Writes the .caffemodel and .solverstate of the current iteration.
  void Snapshot();
  /// Loads a .solverstate and the .caffemodel it names.
  void Restore(const std::string& state_file);
  /// Copies params by layer name from .caffemodel files into the train and
  /// test nets (`paths` is a comma-separated list, applied in order).
  void CopyWeights(const std::string& paths);

  /// Where the solver gets stop and snapshot requests (signals); polled once
  /// per iteration, between the passes of an iteration of iter_size > 1, and
  /// per test batch.
  void SetActionFunction(std::function<SolverAction()> function) {
    action_function_ = std::move(function);
  }
  void AddCallback(Callback* callback);
  /// Takes back a callback added before (one that dies before the solver).
  void RemoveCallback(Callback* callback);

  /// The snapshot file name for the current iteration and `extension`.
  std::string SnapshotFilename(const std::string& extension) const;

  virtual const char* type() const = 0;
  const SolverParameter& param() const { return param_; }
  const Context& context() const { return context_; }
  /// Replica 0: the one that tests, logs progress and writes snapshots.
  bool is_root() const { return context_.replica == 0; }
  Net& net() { return *net_; }
  const Net& net() const { return *net_; }
  const std::vector<std::unique_ptr<Net>>& test_nets() const { return test_nets_; }
  int iter() const { return iter_; }
  float smoothed_loss() const { return smoothed_loss_; }
  /// How many iterations' losses may wait on the device before the solver
  /// reads them back (PendingLosses): the solver's pending_losses, else 1 on
  /// a CPU and kGpuPendingLosses on a GPU (with debug_info, 1); a display,
  /// test, snapshot or stop reads them
  /// sooner. A loss that is not finite stops training when read, naming its
  /// iteration. Between Steps (it drops what a failed Step left pending).
  void set_pending_losses(int capacity);
  static constexpr int kGpuPendingLosses = 50;
  bool requested_early_exit() const { return requested_early_exit_; }
#ifndef CPU_ONLY
  /// The graphs of cuda_graph, or nullptr where they do not apply.
  const StepGraph* step_graph() const { return step_graph_.get(); }
#endif
  const LossScaler& loss_scaler() const { return loss_scaler_; }
  /// History blobs: set s of param p at s * learnable_params().size() + p.
  const std::vector<std::shared_ptr<Blob>>& history() const { return history_; }

 protected:
  /// Builds the train and test nets (test nets only on the root replica:
  /// context.replica == 0). `rule`: the subclass's update rule, which the GPU
  /// pass runs (GpuUpdate) and which sets how many history blobs are kept per
  /// learnable param (HistorySets: momentum; Adam's two moments).
  Solver(const SolverParameter& param, const Context& context, UpdateRule rule);

  /// Takes floats [begin, end) of `row` (offsets into the blocks; diffs
  /// already averaged and clipped) through the update on the host: each
  /// float through UpdateFloat with the rule (RuleSolver). A piece of a row:
  /// pieces run on several threads.
  virtual void UpdateFloats(const UpdateRow& row, int64_t begin, int64_t end,
                            const UpdateBlocks& blocks, const UpdateConstants& constants) const = 0;
  /// This iteration's constants of the update rule.
  virtual UpdateConstants Constants() const;

  /// For the subclasses' constructors: throws unless `value`, the parameter
  /// `what` names, is a decay rate in [0, 1).
  void CheckDecayRate(const std::string& what, float value) const;
  /// Throws if momentum is set: the rule has none (`hint` ends the message).
  void CheckNoMomentum(const std::string& hint) const;

  /// rate * the param's lr_mult.
  float LocalRate(int param_id, float rate) const { return rate * net_->params_lr()[param_id]; }

  SolverParameter param_;

 private:
  void InitTrainNet();
  /// The test nets the solver's fields give, sharing the train net's params
  /// and arena (solver_test_nets.cpp, with TestAll and Test).
  void InitTestNets();
  /// cuda_graph: replays the train net's passes from graphs where it can
  /// (StepGraph), else warns why not.
  void UseCudaGraphs();
  /// Tells the StepGraph that backward's hand-over points may have moved.
  void CallbacksChanged();
  /// Checks snapshot_prefix and, when snapshots will be written, locks it
  /// (PREFIX.lock) for as long as this solver lives.
  void LockSnapshotPrefix();
  /// Runs iter_size forward-backward passes, adding their losses into
  /// *loss on the net's device; false when stopped between them. With
  /// iter_size > 1 it polls for requests between passes: one that stops
  /// puts back the iteration's starting state (RestoreIterationStart);
  /// `*request` receives what was asked.
  bool ForwardBackwardAll(SolverAction* request, float* loss);
  /// What forward passes change besides activations and diffs: the train
  /// layers' random streams, BatchNorm's statistics and the data layers' read
  /// positions; saved at the start of an iteration of several passes, put
  /// back when a stop abandons it.
  void SaveIterationStart();
  void RestoreIterationStart();
  /// The train net's computed params' values (BatchNorm's statistics),
  /// blob by blob in layer order, and setting them.
  std::vector<std::vector<float>> ComputedParamValues() const;
  void SetComputedParamValues(const std::vector<std::vector<float>>& values);
  /// Replication: puts this replica's own statistics back where the net
  /// holds their average (after BeforeTestOrSnapshot or a resume).
  void PutBackOwnStatistics();
  /// One forward-backward pass adding its loss into *loss; with debug_info,
  /// layer by layer, noting where a non-finite top first appears.
  void ForwardBackwardAdding(float* loss);
  /// Reads the pending losses back: checks that each is finite and the
  /// layers' deferred errors, reduces each over the replicas and adds it to
  /// the smoothed loss, in order. Every replica calls it at the same
  /// iterations (the reductions are collective).
  void ReadLosses();
  /// The table of this iteration's update: a row per learnable param.
  void FillUpdateTable(float rate);
  /// The factor that brings the global L2 norm of `diff` (the diff block on
  /// `device`) down to clip_gradients (1 when within it or clipping is off).
  float ClipScale(Device device, const float* diff) const;
  /// Averages the diffs over iter_size, divides out the loss scale and clips
  /// them, on `device`; returns the blocks of the update there. With loss
  /// scaling, sets `*finite` to whether every replica's diffs are finite
  /// (when not, nothing is clipped and the blocks are empty).
  UpdateBlocks PrepareUpdate(Device device, bool* finite);
  /// The update pass: threaded over the rows on the host, one fused kernel
  /// (GpuUpdate) on the GPU.
  void UpdateOnCpu(const UpdateBlocks& blocks, const UpdateConstants& constants);
#ifndef CPU_ONLY
  void UpdateOnGpu(const UpdateBlocks& blocks, const UpdateConstants& constants);
#endif
  /// Adds the next iteration's loss to the window of the last average_loss
  /// ones and takes their mean, summed oldest first: the same value
  /// whichever iteration the window started at.
  void UpdateSmoothedLoss(float loss);
  /// Every element of the train net's outputs, in order (every replica
  /// calls it, for ReduceOutputs).
  std::vector<float> TrainOutputs() const;
  void DisplayTrainOutputs(const std::vector<float>& values);
  void DisplayProgress();
  SolverAction RequestedAction();
  /// `action` as agreed by the callbacks (every replica's requests).
  SolverAction Agree(SolverAction action);
  void BeforeTestOrSnapshot();
  void SnapshotSolverState(const std::string& model_filename);
  std::vector<RandomEngine*> RandomEngines();
  /// The data read positions a snapshot holds: every replica's train net's
  /// (gathered by BeforeTestOrSnapshot when replicated), then each test
  /// net's (as before the tests, when taken during them).
  std::vector<DataReadPosition> SnapshotReadPositions() const;
  /// This replica's part of a snapshot, for GatherReplicaStates: its train
  /// net's read positions, its own statistics and, but on the root, its
  /// random streams.
  SolverState OwnReplicaState();
  /// Restores what `state` holds for this replica of a replicated run (its
  /// replica_state: random streams, own statistics), warning where it holds
  /// none.
  void RestoreOwnReplicaState(const SolverState& state, const std::string& state_file);
  /// Moves the train and test nets' random streams to those of rng_state.
  void RestoreStreams(const SolverState& state, const std::string& state_file);
  std::vector<DataReadPosition> TestReadPositions() const;
  /// Moves this replica's data layers to their positions in `state`.
  void RestoreReadPositions(const SolverState& state, const std::string& state_file);

  Context context_;
  UpdateRule rule_;
  int history_sets_;
  std::unique_ptr<Net> net_;
  std::vector<std::unique_ptr<Net>> test_nets_;
  std::vector<std::shared_ptr<Blob>> history_;
  /// The history blobs' data: set s is the s-th copy of the param layout.
  ViewBlock history_block_;
  LossScaler loss_scaler_;
  std::vector<UpdateRow> update_rows_;
  int64_t max_row_count_ = 0;
  SyncedMemory update_table_;  ///< update_rows_ for the GPU kernels
  int iter_ = 0;
  int current_step_ = 0;
  std::vector<float> losses_;  ///< the smoothed loss's window, oldest first
  float smoothed_loss_ = 0;
  /// Restore loaded the state's window: the next Step averages on with it.
  bool keep_loss_window_ = false;
  std::unique_ptr<PendingLosses> pending_losses_;
#ifndef CPU_ONLY
  /// With cuda_graph, where it applies (CudaGraphBlocker): the passes'
  /// graphs, dropped at the start of every Step (a caller may have changed
  /// the net between Steps).
  std::unique_ptr<StepGraph> step_graph_;
#endif
  /// Where a non-finite loss of the pending iterations came from, for its
  /// message (debug_info finds the layer).
  std::string nonfinite_where_;
  bool requested_early_exit_ = false;
  int last_snapshot_iter_ = -1;  ///< the iteration Snapshot() last wrote, so none is written twice
  std::function<SolverAction()> action_function_;
  std::vector<Callback*> callbacks_;
  std::chrono::steady_clock::time_point display_start_;
  int display_start_iter_ = 0;
  std::shared_ptr<FileLock> snapshot_lock_;        ///< the root's, while snapshots may be written
  std::vector<RandomEngine> start_engines_;        ///< SaveIterationStart's
  std::vector<std::vector<float>> start_stats_;    ///< SaveIterationStart's
  std::vector<DataReadPosition> start_positions_;  ///< SaveIterationStart's (train net)
  /// Replication: this replica's own computed params while the net holds
  /// their average over the replicas (holds_averaged_stats_).
  std::vector<std::vector<float>> own_stats_;
  bool holds_averaged_stats_ = false;
  /// Every replica's train read positions and own part (replica_state: the
  /// root's; replication only; cleared at each iteration's end, empty until
  /// gathered again, as every replica's part has one), and the test nets'
  /// read positions before the current tests (TestAll).
  SolverState gathered_;
  std::vector<DataReadPosition> test_start_positions_;
  /// The test nets' layers' random engines before the current tests.
  std::vector<RandomEngine> test_start_engines_;
  bool testing_ = false;  ///< in TestAll
};

/// @brief A solver whose update is `Rule` (solvers/*.hpp): the step of one
/// float, which the host pass below and the GPU kernel of Rule::kRule
/// (GpuUpdate) both apply, so the two devices agree bit for bit.
template <typename Rule>
class RuleSolver : public Solver {
 protected:
  RuleSolver(const SolverParameter& param, const Context& context)
      : Solver(param, context, Rule::kRule) {}

  void UpdateFloats(const UpdateRow& row, int64_t begin, int64_t end, const UpdateBlocks& blocks,
                    const UpdateConstants& constants) const override {
    const Rule rule{};
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) UpdateFloat(rule, i, row, blocks, constants);
  }
};

}  // namespace demi

#endif  // DEMI_SOLVER_HPP_
