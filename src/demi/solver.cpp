#include "demi/solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <random>
#include <set>
#include <sstream>

#include "demi/memory/report.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/io.hpp"
#include "demi/util/math.hpp"
#include "demi/util/temporary_files.hpp"
#include "demi/util/upgrade_proto.hpp"
#include "demi/weights_file.hpp"

namespace demi {

namespace {

/// A seed for the nets' random streams: random_seed when given, else one
/// from the clock and the system's entropy source.
uint32_t ChooseSeed(const SolverParameter& param) {
  if (param.random_seed() >= 0) return static_cast<uint32_t>(param.random_seed());
  std::random_device entropy;
  const auto ticks = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  return entropy() ^ static_cast<uint32_t>(ticks) ^ static_cast<uint32_t>(ticks >> 32);
}

/// Whether a layer of `net` sets its tops' shapes in Forward (Filter, Python).
bool ShapesTopsInForward(const Net& net) {
  return std::any_of(
      net.layers().begin(), net.layers().end(),
      [](const std::shared_ptr<Layer>& layer) { return layer->ForwardReshapesTops(); });
}

/// "1h02m03s", "4m05s" or "6.7s".
std::string FormatDuration(double seconds) {
  std::ostringstream out;
  if (!std::isfinite(seconds) || seconds < 0) return "unknown";
  const int64_t total = static_cast<int64_t>(seconds + 0.5);
  if (total >= 3600) {
    out << total / 3600 << "h" << std::setw(2) << std::setfill('0') << total % 3600 / 60 << "m"
        << std::setw(2) << total % 60 << "s";
  } else if (total >= 60) {
    out << total / 60 << "m" << std::setw(2) << std::setfill('0') << total % 60 << "s";
  } else {
    out << std::fixed << std::setprecision(1) << seconds << "s";
  }
  return out.str();
}

/// Index of the first top of `layer_id` holding a NaN or an infinity, or -1.
int FirstNonFiniteTop(const Net& net, int layer_id) {
  const auto& tops = net.top_vecs()[layer_id];
  for (size_t i = 0; i < tops.size(); ++i) {
    // In the top's storage type: a 16-bit top is read as what it stores.
    const bool finite = VisitStorageType(tops[i]->storage_type(), [&](auto tag) {
      using T = decltype(tag);
      const T* data = tops[i]->cpu_data_as<T>();
      for (int64_t k = 0; k < tops[i]->count(); ++k) {
        if (!std::isfinite(static_cast<float>(data[k]))) return false;
      }
      return true;
    });
    if (!finite) return static_cast<int>(i);
  }
  return -1;
}

/// The mean of the smoothed loss's window, summed oldest first (0 when empty).
float MeanOfWindow(const std::vector<float>& losses) {
  if (losses.empty()) return 0;
  double sum = 0;
  for (float loss : losses) sum += loss;
  return static_cast<float>(sum / static_cast<double>(losses.size()));
}

}  // namespace

bool HasComputedParams(const Layer& layer) { return std::string(layer.type()) == "BatchNorm"; }

// ---- construction ----

Solver::Solver(const SolverParameter& param, const Context& context, UpdateRule rule)
    : param_(param), context_(context), rule_(rule), history_sets_(HistorySets(rule)) {
  UpgradeSolverAsNeeded("solver parameters", &param_);
  CheckSolverValues(param_, "the solver parameters");
  // No lr_policy at all: refused now, not at the first update (a given one
  // CheckSolverValues checked).
  if (!param_.has_lr_policy()) GetLearningRate(param_, 0);
  LOG(INFO) << "Initializing solver from parameters:\n" << param_.DebugString();
  context_.seed = ChooseSeed(param_);
  if (param_.has_deterministic()) {
    context_.gpu_math = param_.deterministic() ? GpuMath::kDeterministic : GpuMath::kTensorOps;
  }
  LOG(INFO) << "Random seed " << context_.seed
            << (param_.random_seed() >= 0 ? "" : " (from the clock; set random_seed to repeat)");
  if (is_root()) {
    LockSnapshotPrefix();
    // Snapshots of a run killed while writing them.
    if (!param_.snapshot_prefix().empty()) RemoveStaleTemporaries(param_.snapshot_prefix());
  }
  InitTrainNet();
  if (is_root()) InitTestNets();
  DEMI_CHECK(!param_.has_pending_losses() || param_.pending_losses() >= 1,
             "pending_losses must be at least 1, got ", param_.pending_losses());
  int pending = context_.device == Device::kGPU ? kGpuPendingLosses : 1;
  if (param_.has_pending_losses()) pending = param_.pending_losses();
  set_pending_losses(param_.debug_info() ? 1 : pending);
  if (param_.cuda_graph()) UseCudaGraphs();
  const int num_params = static_cast<int>(net_->learnable_params().size());
  for (int set = 0; set < history_sets_; ++set) {
    for (int p = 0; p < num_params; ++p) {
      auto blob = std::make_shared<Blob>(net_->learnable_params()[p]->shape());
      Set(blob->count(), 0.0f, blob->mutable_cpu_data());
      history_.push_back(blob);
    }
  }
  net_->param_block().BindCopies(history_, history_sets_, &history_block_);
  for (const std::string& weights : param_.weights()) CopyWeights(weights);
  LOG(INFO) << "Solver scaffolding done.";
}

void Solver::AddCallback(Callback* callback) {
  callbacks_.push_back(callback);
  CallbacksChanged();
}

void Solver::RemoveCallback(Callback* callback) {
  callbacks_.erase(std::remove(callbacks_.begin(), callbacks_.end(), callback), callbacks_.end());
  CallbacksChanged();
}

void Solver::CallbacksChanged() {
  // Backward's graphs end where a callback hands gradients over.
#ifndef CPU_ONLY
  if (step_graph_) step_graph_->PlanChanged();
#endif
}

void Solver::UseCudaGraphs() {
  const std::string blocker = CudaGraphBlocker(param_, context_);
  if (!blocker.empty()) {
    LOG(WARNING) << "cuda_graph is off: " << blocker;
    return;
  }
  if (ShapesTopsInForward(*net_)) {
    LOG(WARNING)
        << "cuda_graph is off: a layer shapes its tops in each Forward (Filter, Python), which "
           "a graph would replay unchanged";
    return;
  }
#ifndef CPU_ONLY
  // Backward graphs end where a callback's hook hands gradients over (the
  // hooks run between launches); the callbacks are asked at each capture.
  step_graph_ = std::make_unique<StepGraph>(net_.get(), [this](int layer_id) {
    for (const Callback* callback : callbacks_) {
      if (callback->HandsOverAfter(layer_id)) return true;
    }
    return false;
  });
  LOG(INFO) << "Training passes replay from CUDA graphs from the second pass on (captured "
               "again where the net, its memory or the callbacks changed)";
#endif
}

void Solver::set_pending_losses(int capacity) {
  // Between Steps none is pending but those of a Step that failed.
  pending_losses_ = std::make_unique<PendingLosses>(context_.device, capacity);
}

void Solver::CheckDecayRate(const std::string& what, float value) const {
  DEMI_CHECK(value >= 0 && value < 1, type(), " needs ", what, " in [0, 1), got ", value);
}

void Solver::CheckNoMomentum(const std::string& hint) const {
  DEMI_CHECK(param_.momentum() == 0, "the ", type(),
             " solver has no momentum; remove momentum (got ", param_.momentum(), ")", hint);
}

void Solver::LockSnapshotPrefix() {
  const std::string& prefix = param_.snapshot_prefix();
  DEMI_CHECK(param_.snapshot() == 0 || !prefix.empty(), "snapshot is ", param_.snapshot(),
             " but snapshot_prefix is not set");
  if (prefix.empty()) {
    if (param_.snapshot_after_train()) {
      LOG(WARNING) << "snapshot_prefix is not set: no snapshot will be written after training";
    }
    return;
  }
  if (param_.snapshot() == 0 && !param_.snapshot_after_train()) return;
  // Two trainers with one prefix would overwrite each other's snapshots. The
  // lock file also shows, before training, that snapshots can be written.
  snapshot_lock_ =
      FileLock::Acquire(prefix + ".lock", StrCat("snapshot_prefix '", prefix, "'"),
                        "wait for that trainer to end, or give this one another snapshot_prefix");
}

void Solver::InitTrainNet() {
  const int num_train_nets = param_.has_net() + param_.has_net_param() + param_.has_train_net() +
                             param_.has_train_net_param();
  const char* fields = "net, net_param, train_net, train_net_param";
  DEMI_CHECK(num_train_nets >= 1, "the solver must give a train net in one of: ", fields);
  DEMI_CHECK(num_train_nets <= 1, "the solver gives ", num_train_nets,
             " train nets; use only one of: ", fields);
  NetParameter net_param;
  std::string path;  // the prototxt, when the net comes from one
  if (param_.has_train_net_param()) {
    LOG(INFO) << "Creating training net specified in train_net_param.";
    net_param.CopyFrom(param_.train_net_param());
  } else if (param_.has_train_net()) {
    LOG(INFO) << "Creating training net from train_net file: " << param_.train_net();
    path = param_.train_net();
    ReadNetParamsFromTextFile(path, &net_param);
  } else if (param_.has_net_param()) {
    LOG(INFO) << "Creating training net specified in net_param.";
    net_param.CopyFrom(param_.net_param());
  } else {
    LOG(INFO) << "Creating training net from net file: " << param_.net();
    path = param_.net();
    ReadNetParamsFromTextFile(path, &net_param);
  }
  // The net's own state, then the solver's train_state, over phase TRAIN.
  NetState state;
  state.set_phase(TRAIN);
  state.MergeFrom(net_param.state());
  state.MergeFrom(param_.train_state());
  net_param.mutable_state()->CopyFrom(state);
  ApplySolverOverrides(param_, &net_param);
  // Only the train net runs backward: the budget is its own.
  if (param_.has_memory_budget()) net_param.set_memory_budget(param_.memory_budget());
  net_ = std::make_unique<Net>(net_param, context_, nullptr, path);
  loss_scaler_ = LossScaler(net_param, param_);
  if (loss_scaler_.enabled()) {
    net_->SetGradientScale(loss_scaler_.scale());
    LOG(INFO) << (loss_scaler_.dynamic() ? "Dynamic" : "Static") << " loss scaling from "
              << loss_scaler_.scale();
  }
}

void Solver::CopyWeights(const std::string& paths) {
  std::set<std::string> fed;  // train net layers any file fed
  for (const std::string& path : SplitList(paths)) {
    const NetParameter weights = ReadWeightsFile(path);
    LOG(INFO) << "Copying weights from " << path;
    std::vector<std::string> copied;
    try {
      copied = net_->CopyTrainedLayersFrom(weights);
      for (auto& test_net : test_nets_) test_net->CopyTrainedLayersFrom(weights);
    } catch (const Error& error) {
      ThrowError(StrCat("cannot copy weights from '", path, "': ", error.what()));
    }
    net_->CheckWeightsMatch(path, weights, copied);
    fed.insert(copied.begin(), copied.end());
  }
  net_->WarnLayersWithoutWeights(fed);
}

// ---- the loop ----

void Solver::Solve(const std::string& resume_file) {
  // Replicas: the root speaks for all.
  LOG_IF(INFO, is_root()) << "Solving " << net_->name();
  LOG_IF(INFO, is_root()) << "Learning Rate Policy: " << param_.lr_policy();
  requested_early_exit_ = false;
  if (!resume_file.empty()) {
    LOG(INFO) << "Restoring previous solver status from " << resume_file;
    Restore(resume_file);
  }
  Step(param_.max_iter() - iter_);
  // A stopped run snapshots too, so that it can be resumed; a snapshot_stop
  // request has written this iteration's already.
  if (param_.snapshot_after_train() && (param_.snapshot() == 0 || iter_ % param_.snapshot() != 0)) {
    BeforeTestOrSnapshot();
    if (last_snapshot_iter_ != iter_) Snapshot();
  }
  if (requested_early_exit_) {
    LOG_IF(INFO, is_root()) << "Optimization stopped early.";
    return;
  }
  // As Caffe: show the loss and test the final params.
  if (param_.display() && iter_ % param_.display() == 0) {
    // A TRAIN pass moves BatchNorm's statistics: each replica's own, so
    // the test below averages them afresh whether a snapshot came or not.
    PutBackOwnStatistics();
    float loss = net_->Forward();
    for (Callback* callback : callbacks_) loss = callback->ReduceLoss(loss);
    UpdateSmoothedLoss(loss);
    if (is_root()) LOG(INFO) << "Iteration " << iter_ << ", loss = " << smoothed_loss_;
  }
  if (param_.test_interval() && iter_ % param_.test_interval() == 0) {
    BeforeTestOrSnapshot();
    TestAll();
  }
  LOG_IF(INFO, is_root()) << "Optimization Done.";
}

void Solver::Step(int iters) {
  // A stop ended the last call: this one runs (and tests) anew.
  requested_early_exit_ = false;
  const int start_iter = iter_;
  const int stop_iter = iter_ + iters;
  // As Caffe, each Step averages its own losses; the first after a Restore
  // goes on with the window the state saved.
  if (!keep_loss_window_) losses_.clear();
  keep_loss_window_ = false;
  smoothed_loss_ = MeanOfWindow(losses_);
  pending_losses_->Clear();
  display_start_ = std::chrono::steady_clock::now();
  display_start_iter_ = iter_;
  while (iter_ < stop_iter) {
    net_->ClearParamDiffs();
    if (param_.test_interval() && iter_ % param_.test_interval() == 0 &&
        (iter_ > 0 || param_.test_initialization())) {
      ReadLosses();
      BeforeTestOrSnapshot();
      TestAll();
      // The root alone tests (and sees stop requests meanwhile).
      requested_early_exit_ =
          Agree(requested_early_exit_ ? SolverAction::kStop : SolverAction::kNone) ==
          SolverAction::kStop;
      if (requested_early_exit_) break;
    }
    PutBackOwnStatistics();
    for (Callback* callback : callbacks_) callback->OnStart();
    const bool display = param_.display() && iter_ % param_.display() == 0;
    net_->set_debug_info(display && param_.debug_info());
    SolverAction early_request = SolverAction::kNone;
    if (!ForwardBackwardAll(&early_request, pending_losses_->Add(iter_))) {
      pending_losses_->DropLast();
      ReadLosses();  // every replica stopped here (Agree)
      // Stopped between passes: the state is the iteration's start again.
      if (ActionSnapshots(early_request)) {
        BeforeTestOrSnapshot();
        Snapshot();
      }
      LOG_IF(INFO, is_root()) << "Iteration " << iter_ << " abandoned between its passes; "
                              << "a resume starts it again";
      requested_early_exit_ = true;
      break;
    }
    for (Callback* callback : callbacks_) callback->OnGradientsReady();
    // Before the update, as every pass's loss was once checked before it:
    // on a CPU (one pending) a non-finite loss stops the run unapplied.
    if (display || pending_losses_->full()) ReadLosses();
    std::vector<float> outputs;
    if (display) {
      outputs = TrainOutputs();
      // After a Filter or a Python layer an output's size is each replica's own: the root's
      // values are shown then, as every replica must reduce alike.
      if (!ShapesTopsInForward(*net_)) {
        for (Callback* callback : callbacks_) callback->ReduceOutputs(&outputs);
      }
    }
    if (display && is_root()) {
      LOG(INFO) << "Iteration " << iter_ << ", loss = " << smoothed_loss_;
      DisplayTrainOutputs(outputs);
      DisplayProgress();
      if (context_.device == Device::kGPU && iter_ == start_iter) {
        LOG(INFO) << DeviceMemoryLine(net_->memory_plan().arena_bytes, context_.device_id);
      }
    }
    ApplyUpdate();
    ++iter_;
    gathered_.Clear();  // the replicas read on: gathered again when needed
    SolverAction request = Agree(RequestedAction());
    // A snapshot asked for between the passes is served now.
    if (ActionSnapshots(early_request) && !ActionSnapshots(request)) {
      request = ActionStops(request) ? SolverAction::kSnapshotStop : SolverAction::kSnapshot;
    }
    if ((param_.snapshot() && iter_ % param_.snapshot() == 0) || ActionSnapshots(request)) {
      ReadLosses();  // a non-finite loss stops the run before its snapshot
      BeforeTestOrSnapshot();
      Snapshot();
    }
    if (ActionStops(request)) {
      requested_early_exit_ = true;
      break;
    }
  }
  ReadLosses();
}

bool Solver::ForwardBackwardAll(SolverAction* request, float* loss) {
  const int passes = param_.iter_size();
  if (passes > 1) SaveIterationStart();
  nonfinite_where_.clear();
  for (int i = 0; i < passes; ++i) {
    if (i > 0) {
      // Every replica polls here too (Agree is collective), in step.
      const SolverAction asked = Agree(RequestedAction());
      if (ActionStops(asked)) {
        *request = asked;
        RestoreIterationStart();
        return false;
      }
      if (ActionSnapshots(asked)) *request = SolverAction::kSnapshot;
    }
    // Params are final only in the last pass: callbacks see its layers.
    if (i + 1 == passes && !callbacks_.empty()) {
      net_->set_layer_backward_hook([this](int layer_id) {
        for (Callback* callback : callbacks_) callback->OnLayerBackward(layer_id);
      });
    }
    try {
      ForwardBackwardAdding(loss);
    } catch (...) {
      net_->set_layer_backward_hook(nullptr);
      throw;
    }
  }
  net_->set_layer_backward_hook(nullptr);
  return true;
}

std::vector<std::vector<float>> Solver::ComputedParamValues() const {
  std::vector<std::vector<float>> values;
  for (const auto& layer : net_->layers()) {
    if (!HasComputedParams(*layer)) continue;
    for (const auto& blob : layer->blobs()) {
      const float* data = blob->cpu_data();
      values.emplace_back(data, data + blob->count());
    }
  }
  return values;
}

void Solver::SetComputedParamValues(const std::vector<std::vector<float>>& values) {
  size_t next = 0;
  for (const auto& layer : net_->layers()) {
    if (!HasComputedParams(*layer)) continue;
    for (const auto& blob : layer->blobs()) {
      const std::vector<float>& saved = values[next++];
      std::copy(saved.begin(), saved.end(), blob->mutable_cpu_data());
    }
  }
}

void Solver::SaveIterationStart() {
  start_positions_ = net_->SaveReadPositions(0, context_.replica);
  start_engines_.clear();
  for (const auto& layer : net_->layers()) start_engines_.push_back(*layer->rng());
  start_stats_ = ComputedParamValues();
}

void Solver::RestoreIterationStart() {
  net_->ClearParamDiffs();
  net_->RestoreReadPositions(start_positions_, 0, context_.replica, "the iteration's start");
  for (size_t i = 0; i < net_->layers().size(); ++i) *net_->layers()[i]->rng() = start_engines_[i];
  SetComputedParamValues(start_stats_);
}

void Solver::PutBackOwnStatistics() {
  if (!holds_averaged_stats_) return;
  SetComputedParamValues(own_stats_);
  holds_averaged_stats_ = false;
}

void Solver::ForwardBackwardAdding(float* loss) {
  const int last = static_cast<int>(net_->layers().size()) - 1;
  if (!param_.debug_info()) {
    nonfinite_where_ =
        "; set debug_info: true in the solver to find the layer where it first appears";
#ifndef CPU_ONLY
    if (step_graph_ && step_graph_->Run(loss)) return;
#endif
    net_->ForwardAddingLoss(0, last, loss);
  } else {
    // Layer by layer, so that the first non-finite top is seen while it is
    // still valid (a planned net reuses activation memory). One loss is
    // pending then: the message is this iteration's, its first pass's that
    // names a layer.
    const bool named = nonfinite_where_.find("appeared") != std::string::npos;
    std::string where;
    for (int step = 0; step <= last; ++step) {
      net_->ForwardAddingLoss(step, step, loss);
      const int i = net_->execution_order()[step];
      const int top = where.empty() && !named ? FirstNonFiniteTop(*net_, i) : -1;
      if (top >= 0) {
        where = StrCat("; the first non-finite value appeared in top '",
                       net_->blob_names()[net_->top_id_vecs()[i][top]], "' of layer '",
                       net_->layer_names()[i], "' (", net_->layers()[i]->type(), ")");
      }
    }
    if (!named)
      nonfinite_where_ = where.empty() ? "; no layer's top holds a non-finite value" : where;
  }
  net_->Backward();
}

void Solver::ReadLosses() {
  if (pending_losses_->empty()) return;
  const std::vector<PendingLosses::Loss> losses = pending_losses_->Take();
  net_->CheckDeferredErrors();
  for (const PendingLosses::Loss& pending : losses) {
    // Reduced first: a replica's non-finite loss makes every replica's sum
    // so, and all of them stop together.
    float loss = pending.value / param_.iter_size();
    for (Callback* callback : callbacks_) loss = callback->ReduceLoss(loss);
    DEMI_CHECK(std::isfinite(loss), "loss is ", std::isnan(loss) ? "NaN" : "infinite",
               " at iteration ", pending.iteration, nonfinite_where_);
    UpdateSmoothedLoss(loss);
  }
}

void Solver::UpdateSmoothedLoss(float loss) {
  losses_.push_back(loss);
  const size_t window = static_cast<size_t>(param_.average_loss());
  if (losses_.size() > window) losses_.erase(losses_.begin(), losses_.end() - window);
  smoothed_loss_ = MeanOfWindow(losses_);
}

std::vector<float> Solver::TrainOutputs() const {
  std::vector<float> values;
  for (const Blob* output : net_->output_blobs()) {
    values.insert(values.end(), output->cpu_data(), output->cpu_data() + output->count());
  }
  return values;
}

void Solver::DisplayTrainOutputs(const std::vector<float>& values) {
  const auto& outputs = net_->output_blobs();
  size_t score_index = 0;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const int blob_id = net_->output_blob_indices()[j];
    const std::string& name = net_->blob_names()[blob_id];
    const float weight = net_->blob_loss_weights()[blob_id];
    for (int64_t k = 0; k < outputs[j]->count(); ++k, ++score_index) {
      const float value = values[score_index];
      LOG(INFO) << "    Train net output #" << score_index << ": " << name << " = " << value
                << (weight != 0 ? StrCat(" (* ", weight, " = ", weight * value, " loss)")
                                : std::string());
    }
  }
}

void Solver::DisplayProgress() {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - display_start_).count();
  const int done = iter_ - display_start_iter_;
  if (done > 0 && seconds > 0) {
    const double per_second = done / seconds;
    const int remaining = std::max(0, param_.max_iter() - iter_);
    LOG(INFO) << "Speed: " << per_second << " iter/s (" << seconds / done * 1000 << " ms/iter), "
              << iter_ << "/" << param_.max_iter() << " iterations, ETA "
              << FormatDuration(remaining / per_second);
  }
  display_start_ = now;
  display_start_iter_ = iter_;
}

SolverAction Solver::RequestedAction() {
  return action_function_ ? action_function_() : SolverAction::kNone;
}

SolverAction Solver::Agree(SolverAction action) {
  for (Callback* callback : callbacks_) action = callback->AgreeOnAction(action);
  return action;
}

void Solver::BeforeTestOrSnapshot() {
  // Replication averages the BatchNorm statistics for the tests and
  // snapshots; each replica trains on with its own (PutBackOwnStatistics),
  // so when they come changes no replica's training. Every replica holds
  // the average already when no pass ran since the last time.
  if (context_.num_replicas == 1 || !holds_averaged_stats_) {
    if (context_.num_replicas > 1) own_stats_ = ComputedParamValues();
    for (Callback* callback : callbacks_) callback->OnBeforeTestOrSnapshot();
    holds_averaged_stats_ = context_.num_replicas > 1;
  }
  // A snapshot may also come during the test that follows, when the root
  // runs alone: every replica's read positions are gathered now.
  if (context_.num_replicas > 1) {
    SolverState state = OwnReplicaState();
    for (Callback* callback : callbacks_) state = callback->GatherReplicaStates(std::move(state));
    gathered_ = std::move(state);
  }
}

}  // namespace demi
