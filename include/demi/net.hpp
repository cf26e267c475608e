#ifndef DEMI_NET_HPP_
#define DEMI_NET_HPP_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "demi/blob.hpp"
#include "demi/common.hpp"
#include "demi/layer.hpp"
#include "demi/memory/arena.hpp"
#include "demi/memory/planner.hpp"
#include "demi/memory/recompute.hpp"
#include "demi/memory/schedule_search.hpp"
#include "demi/param_block.hpp"
#include "demi/pending_losses.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

struct NetLiveness;

/// @brief A DAG of layers built from a NetParameter, as in Caffe.
///
/// Init is a sequence of named steps: filter layers by the net state (phase,
/// level, stages) → insert splits for blobs read by several layers → create
/// layers and connect their blobs (in-place layers reuse their bottom) →
/// backward analysis (which layers and blobs need gradients, which
/// contribute to the loss) → fuse in-place pairs (a BatchNorm runs its
/// Scale) → collect params (sharing by name, with shape checks) → link saved buffers of consecutive
/// in-place layers → plan memory.
class Net {
 public:
  /// `arena`: where planned tensors live; nets that never run at the same
  /// time (a solver's train and test nets) pass the same one. A net without
  /// one makes its own. `source`: where `param` came from (a prototxt path),
  /// named in the errors of building the net.
  explicit Net(const NetParameter& param, const Context& context = Context(),
               std::shared_ptr<Arena> arena = nullptr, const std::string& source = "");
  /// Reads `path` (a net prototxt) and builds it for `phase`, `level` and
  /// `stages`.
  Net(const std::string& path, Phase phase, int level = 0,
      const std::vector<std::string>& stages = {}, const Context& context = Context());
  Net(const Net&) = delete;
  Net& operator=(const Net&) = delete;

  /// Runs every layer forward; returns the total weighted loss.
  float Forward();
  /// Runs steps [start, end] of the execution order forward; returns their
  /// loss. Step i runs layer execution_order()[i] (layer i unless the
  /// planner chose another order).
  float ForwardFromTo(int start, int end);
  /// ForwardFromTo without reading the loss back (on a GPU, without waiting
  /// for the device): adds it into *loss, a float on the net's device.
  void ForwardAddingLoss(int start, int end, float* loss);
  /// Every layer's CheckDeferredErrors(): what ForwardAddingLoss found wrong
  /// on the device (labels outside the classes), raised now.
  void CheckDeferredErrors();
  /// Runs every layer that needs it backward, in reverse execution order.
  void Backward();
  /// Runs steps start down to end of the execution order backward.
  void BackwardFromTo(int start, int end);
  float ForwardBackward();
  /// Re-runs every layer's Reshape (after an input changed shape) and
  /// re-plans memory when any tensor's size changed. Layers do not reshape
  /// inside Forward: shape changes go through here.
  void Reshape();
  void ClearParamDiffs();
  /// Multiplies every loss weight by `scale` (1 by default): replication
  /// scales each replica's loss by 1 / replicas, so that summing their
  /// gradients averages them and summing their losses gives the global one.
  void SetLossScale(float scale);
  float loss_scale() const { return loss_scale_; }
  /// Backward then starts from each loss weight times `scale` (mixed
  /// precision's loss scaling, loss_scaler.hpp): the diffs of the tops with a
  /// loss weight, which loss layers read as their weight, become weight *
  /// scale, and so every gradient is scaled. Unlike SetLossScale, the loss
  /// Forward returns is not.
  void SetGradientScale(float scale);
  float gradient_scale() const { return gradient_scale_; }
  /// Called after each layer's Backward with its index (replication starts
  /// all-reducing the params that layer finished); empty to stop.
  void set_layer_backward_hook(std::function<void(int layer_id)> hook) {
    layer_backward_hook_ = std::move(hook);
  }
  const std::function<void(int layer_id)>& layer_backward_hook() const {
    return layer_backward_hook_;
  }
  /// The layers whose hooks run after step `step`'s Backward, in order: its
  /// layer and those it absorbed; none where the step runs no Backward.
  std::vector<int> BackwardHookLayers(int step) const;
  /// Whether BackwardFromTo(step, step) does nothing: the step's layer
  /// needs no backward, or was absorbed and recomputes nothing there.
  bool BackwardStepIdle(int step) const;
  /// Calls the hook, if set, for BackwardHookLayers(step): BackwardFromTo
  /// after each step; a CUDA graph's replay (StepGraph) after launching it.
  void RunBackwardHooks(int step) const;
  /// data -= diff for every learnable param (after the solver scaled diffs).
  void Update();
  /// The learnable params' data and diffs as two contiguous blocks, in the
  /// order of learnable_params() (param_block.hpp).
  ParamBlock& param_block() { return param_block_; }

  /// Points this net's params at `other`'s (same-named layers, same shapes).
  void ShareTrainedLayersWith(const Net& other);
  /// Copies params from layers of the same name; a shape mismatch throws an
  /// Error naming the layer and both shapes. Layers missing from `param` keep
  /// their initial values. Returns the layers whose params it copied.
  std::vector<std::string> CopyTrainedLayersFrom(const NetParameter& param);
  /// Copies from each .caffemodel of `paths` in order, later files winning,
  /// as fine-tuning does. A file that matches no layer with params throws an
  /// Error naming it; the layers with params that no file fed are listed in
  /// one WARNING.
  void CopyTrainedLayersFrom(const std::vector<std::string>& paths);
  void CopyTrainedLayersFrom(const std::string& path);
  /// The checks of the above, for callers that copy file by file themselves
  /// (a Solver, into its train and test nets): `copied` are the layers fed
  /// by `weights`, read from `path`; `fed`, those fed by any file.
  void CheckWeightsMatch(const std::string& path, const NetParameter& weights,
                         const std::vector<std::string>& copied) const;
  void WarnLayersWithoutWeights(const std::set<std::string>& fed) const;
  /// The layers with params that `fed` lacks, comma-separated ("": none).
  std::string LayersWithoutWeights(const std::set<std::string>& fed) const;
  /// Writes the net (without auto-inserted splits) and its params.
  void ToProto(NetParameter* param, bool write_diff = false) const;

  /// The read positions of the net's data layers (Layer::SaveReadPosition),
  /// in layer order, each with `net` and `replica` set as given.
  std::vector<DataReadPosition> SaveReadPositions(int net, int replica) const;
  /// Moves every data layer to the entry of `positions` with its name, net
  /// `net` and replica `replica`. A data layer without one, or whose entry is
  /// of another type, reads from its beginning, with a WARNING naming it and
  /// `from` (the file the positions came from).
  void RestoreReadPositions(const std::vector<DataReadPosition>& positions, int net, int replica,
                            const std::string& from);

  /// True if the layer state meets `rule` (phase, level range, stages).
  static bool StateMeetsRule(const NetState& state, const NetStateRule& rule,
                             const std::string& layer_name);
  /// Keeps the layers whose include/exclude rules admit `param.state()`.
  static void FilterNet(const NetParameter& param, NetParameter* filtered);

  const std::string& name() const { return name_; }
  /// The prototxt the net was built from, when known (else empty).
  const std::string& source() const { return source_; }
  Phase phase() const { return phase_; }
  const Context& context() const { return context_; }
  const std::vector<std::string>& layer_names() const { return layer_names_; }
  const std::vector<std::string>& blob_names() const { return blob_names_; }
  const std::vector<std::shared_ptr<Blob>>& blobs() const { return blobs_; }
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }
  const std::vector<std::vector<Blob*>>& bottom_vecs() const { return bottom_vecs_; }
  const std::vector<std::vector<Blob*>>& top_vecs() const { return top_vecs_; }
  const std::vector<std::vector<int>>& bottom_id_vecs() const { return bottom_id_vecs_; }
  const std::vector<std::vector<int>>& top_id_vecs() const { return top_id_vecs_; }
  const std::vector<std::vector<bool>>& bottom_need_backward() const {
    return bottom_need_backward_;
  }
  const std::vector<bool>& layer_need_backward() const { return layer_need_backward_; }
  const std::vector<float>& blob_loss_weights() const { return blob_loss_weights_; }
  /// Every param blob of every layer, shared ones included once per use.
  const std::vector<std::shared_ptr<Blob>>& params() const { return params_; }
  /// For each param, the index of the param it shares, or -1 if it owns.
  const std::vector<int>& param_owners() const { return param_owners_; }
  const std::vector<std::string>& param_display_names() const { return param_display_names_; }
  /// The params the solver updates: owners only, each once.
  const std::vector<Blob*>& learnable_params() const { return learnable_params_; }
  /// For each learnable param, its index in params().
  const std::vector<int>& learnable_param_ids() const { return learnable_param_ids_; }
  /// For each param, {layer index, index among that layer's blobs}.
  const std::vector<std::pair<int, int>>& param_layer_indices() const {
    return param_layer_indices_;
  }
  const std::vector<float>& params_lr() const { return params_lr_; }
  const std::vector<float>& params_weight_decay() const { return params_weight_decay_; }
  const std::vector<Blob*>& input_blobs() const { return net_input_blobs_; }
  const std::vector<Blob*>& output_blobs() const { return net_output_blobs_; }
  const std::vector<int>& output_blob_indices() const { return net_output_blob_indices_; }

  bool has_blob(const std::string& name) const { return blob_index_.count(name) > 0; }
  /// The named blob, or an Error listing the net's blobs.
  std::shared_ptr<Blob> blob_by_name(const std::string& name) const;
  bool has_layer(const std::string& name) const { return layer_index_.count(name) > 0; }
  std::shared_ptr<Layer> layer_by_name(const std::string& name) const;
  int layer_index(const std::string& name) const;
  /// The current memory plan (its naive, planned and lower-bound bytes) and
  /// the bytes kept out of it.
  const Plan& memory_plan() const { return plan_; }
  size_t persistent_bytes() const { return persistent_bytes_; }
  MemoryOptimization memory_optimization() const { return strategy_; }
  /// NetParameter.schedule: whether ARENA plans search for an order.
  ScheduleOrder schedule_order() const { return schedule_order_; }
  /// The arena bytes training may take (0: no budget), and what the planner
  /// drops and recomputes to fit it (nothing without a budget).
  size_t memory_budget() const { return memory_budget_; }
  const Recomputation& recomputation() const { return recomputation_; }
  /// The layer each step of forward runs (backward runs them in reverse):
  /// prototxt order, or the order the planner chose to lower the memory
  /// bound (NetParameter.schedule: SEARCH, ARENA plans), which computes
  /// the same bits.
  const std::vector<int>& execution_order() const { return execution_order_; }
  /// The search behind execution_order(): both orders' bounds and plans.
  const ScheduleChoice& schedule_choice() const { return schedule_choice_; }
  const std::shared_ptr<Arena>& arena() const { return arena_; }
  bool debug_info() const { return debug_info_; }
  void set_debug_info(bool value) { debug_info_ = value; }

 private:
  void Init(const NetParameter& param);
  void CreateAndConnectLayers(const NetParameter& param);
  /// The engine and types of one layer (engine_decision.hpp), logged: one
  /// line at -v=1, or at INFO when it is not the engine asked for.
  EngineDecision DecideLayerEngine(const LayerParameter& layer_param) const;
  void AppendBottom(const NetParameter& param, int layer_id, int bottom_id);
  void AppendTop(const NetParameter& param, int layer_id, int top_id);
  void SetUpLayer(int layer_id);
  /// Layer `later`, set up, has the name of layer `earlier`: allowed (as in
  /// Caffe) where neither keeps params or a data read position.
  void CheckSharedName(int earlier, int later) const;
  /// Which layers, bottoms and params run backward: MarkBackwardFromInputsAndParams,
  /// PruneBackwardOutsideLosses, then ForceBackward where the net asks.
  void AnalyzeBackward(const NetParameter& param);
  void MarkBackwardFromInputsAndParams();
  void PruneBackwardOutsideLosses();
  void ForceBackward();
  /// Tells each layer whose top 0 a later layer overwrites in place
  /// (Layer::TopOverwrittenLater).
  void NoteOverwrittenTops();
  /// With `fuse`, offers each layer the layer reading its top 0 next, in
  /// place (Layer::Absorb), and marks the absorbed ones (net_fusion.cpp).
  void FuseLayers(bool fuse);
  /// The first layer after layer `after` reading layer `i`'s top 0, if it
  /// does so in place and a layer may absorb it (one bottom and top, no
  /// loss, no propagate_down of its own); else -1.
  int AbsorbableNext(int i, int after) const;
  /// Collects every layer's params, then binds the learnable ones into
  /// the param block.
  void AppendParams();
  void AppendParam(const LayerParameter& layer_param, int layer_id, int param_id);
  /// Refuses a shared param whose layers give different lr_mult or
  /// decay_mult (param `net_param_id` of `layer_param`, owned by `owner_id`).
  void CheckSharedMultipliers(const LayerParameter& layer_param, const ParamSpec& spec,
                              int owner_id, int net_param_id) const;
  void CollectOutputs();
  /// Lets an in-place layer read the previous in-place layer's saved copy of
  /// their shared blob instead of keeping its own (BatchNorm then Scale).
  void LinkSavedBuffers();
  /// Plans activations, gradients and layer buffers into the arena (unless
  /// the strategy is NONE) when their sizes differ from the last plan.
  void PlanMemory();
  void LogRecomputation(const Schedule& schedule) const;
  /// Sets execution_order_: prototxt order, or, for ARENA plans unless
  /// the net asks for PROTOTXT, the order ChooseOrder finds for `schedule`
  /// (in prototxt order); logs one line when it differs.
  void ChooseExecutionOrder(const Schedule& schedule, PlanStrategy strategy);
  /// Before PlanMemory binds the arena: throws an Error with the figures
  /// (and a `memory --fit` hint) when the bytes the plan has yet to allocate
  /// exceed what the machine allows: the host's limits (util/host_memory)
  /// on the CPU, the device's free memory on a GPU (net_memory_fit.cpp).
  void CheckPlanFits(const NetLiveness& liveness) const;
  /// Points every planned tensor (and the layers' scratch) at its range.
  void BindToArena(const NetLiveness& liveness);
  void ReshapeLayers();
  /// After the layers were reshaped: gives oneDNN's channel-blocked layout,
  /// and 16-bit storage, to the blobs passed only between layers that read
  /// and write it, and reshapes the layers again where that changed a blob
  /// (net_layouts.cpp).
  void SettleLayouts();
  /// SettleLayouts' rounds: choose, apply, reshape until nothing changes.
  void SettleFormats();
  /// Marks the layers' reshapes as trials or not (Layer::settling).
  void SetLayersSettling(bool settling);
  /// Logs, where the net asks for 16-bit types, which layers run wider ones
  /// (their engines store or compute the asked ones not) and how many blobs
  /// are 16-bit; and once a process that FLOAT16 on a CPU is storage only.
  void LogNarrowTypes(const NetParameter& param) const;
  /// Which blobs can take a format: those the user never sees (not an
  /// input, an output or a kept blob) that `fits`, and whose every layer
  /// takes it as `formats` of that layer says (as last reshaped).
  /// A blob that is `indifferent` (the format would move no byte) never
  /// takes it, but does not stop a kUniform layer's other blobs taking it.
  std::vector<bool> BlobsTakingFormat(
      const std::function<bool(const Blob&)>& fits,
      const std::function<BlobFormats(const Layer&)>& formats,
      const std::function<bool(const Blob&)>& indifferent = nullptr) const;
  /// The channel block (1: Caffe's layout) and storage type of each blob.
  std::vector<int> ChooseChannelBlocks() const;
  /// ChooseChannelBlocks where WantsChannelsLast: block = channels for each
  /// blob taking it.
  std::vector<int> ChooseChannelsLast() const;
  /// Whether the blobs go channels last: NetParameter.channels_last, and a
  /// layer that reads it per blob (a convolution on a GPU, or on a CPU where
  /// DnnlPrefersChannelsLast).
  bool WantsChannelsLast() const;
  std::vector<Type> ChooseStorageTypes() const;
  /// Gives each blob its block and type; true when one changed.
  bool ApplyFormats(const std::vector<int>& blocks, const std::vector<Type>& types);
  std::string DescribeBottoms(int layer_id) const;
  void LogForwardDebugInfo(int layer_id) const;
  /// Sets each loss top's diff to its loss weight times gradient_scale_.
  void SeedLossDiffs();
  void LogBackwardDebugInfo(int layer_id) const;

  std::string name_;
  std::string source_;  ///< the prototxt the net came from, when known
  Phase phase_ = TRAIN;
  Context context_;
  EngineDefaults engine_defaults_;  ///< the net's engine and default types
  bool debug_info_ = false;
  /// NetParameter.channels_last: layers offering it may get NHWC blobs.
  bool channels_last_ = true;
  float loss_scale_ = 1.0f;
  float gradient_scale_ = 1.0f;
  PendingLosses forward_loss_{context_.device, 1};  ///< ForwardFromTo's sum, read at once
  std::function<void(int)> layer_backward_hook_;
  /// f(layer id) for BackwardHookLayers(step), without building the list.
  template <typename F>
  void ForEachBackwardHookLayer(int step, F&& f) const {
    const int i = execution_order_[step];
    if (!layer_need_backward_[i] || layers_[i]->absorbed()) return;
    f(i);
    for (int absorbed : absorbed_layers_[i]) f(absorbed);
  }

  std::vector<std::shared_ptr<Layer>> layers_;
  std::vector<std::string> layer_names_;
  std::map<std::string, int> layer_index_;
  std::vector<bool> layer_need_backward_;
  /// For each layer, the layers it absorbed (FuseLayers): their backward
  /// hooks run after its Backward, which computes their gradients.
  std::vector<std::vector<int>> absorbed_layers_;
  std::set<std::string> inserted_split_;  ///< names of layers InsertSplits added

  std::vector<std::shared_ptr<Blob>> blobs_;
  std::vector<std::string> blob_names_;
  std::map<std::string, int> blob_index_;
  std::vector<bool> blob_need_backward_;
  std::vector<int> blob_producer_;  ///< layer that last produced each blob
  std::vector<float> blob_loss_weights_;
  /// Blobs produced so far and not yet consumed while connecting layers.
  std::map<std::string, int> available_blobs_;

  std::vector<std::vector<Blob*>> bottom_vecs_;
  std::vector<std::vector<int>> bottom_id_vecs_;
  std::vector<std::vector<bool>> bottom_need_backward_;
  std::vector<std::vector<Blob*>> top_vecs_;
  std::vector<std::vector<int>> top_id_vecs_;

  std::vector<std::shared_ptr<Blob>> params_;
  std::vector<int> param_owners_;
  std::vector<std::string> param_display_names_;
  std::vector<std::pair<int, int>> param_layer_indices_;
  std::map<std::string, int> param_names_index_;
  std::vector<Blob*> learnable_params_;
  std::vector<int> learnable_param_ids_;
  std::vector<float> params_lr_;
  std::vector<float> params_weight_decay_;
  ParamBlock param_block_;

  MemoryOptimization strategy_ = ARENA;
  size_t memory_budget_ = 0;
  Recomputation recomputation_;  ///< replays indexed by step
  ScheduleOrder schedule_order_ = SEARCH;
  std::vector<int> execution_order_;
  ScheduleChoice schedule_choice_;
  std::set<std::string> keep_blobs_;
  std::shared_ptr<Arena> arena_;
  Plan plan_;
  std::vector<size_t> planned_sizes_;
  /// A top grew out of the arena in a Forward (ForwardReshapesTops): the
  /// next pass re-plans first.
  bool replan_pending_ = false;
  /// A top changed shape earlier in the pass (ForwardReshapesTops): each
  /// later layer is reshaped before it runs, also when the pass comes in
  /// several ForwardAddingLoss calls (debug_info runs one step each).
  bool reshaping_ = false;
  size_t persistent_bytes_ = 0;

  std::vector<Blob*> net_input_blobs_;
  std::vector<Blob*> net_output_blobs_;
  std::vector<int> net_output_blob_indices_;
};

}  // namespace demi

#endif  // DEMI_NET_HPP_
