#include "demi/parallel/replica_sync.hpp"

#include <algorithm>
#include <string>

#include "demi/util/device.hpp"

namespace demi {

namespace {

/// Layers whose params are statistics computed in forward, not learned.
bool HasComputedParams(const Layer& layer) { return std::string(layer.type()) == "BatchNorm"; }

}  // namespace

ReplicaSync::ReplicaSync(Solver* solver, Communicator* comm) : solver_(solver), comm_(comm) {
  CHECK(solver_ && comm_);
  CHECK_EQ(solver_->context().replica, comm_->rank());
  on_gpu_ = solver_->context().device == Device::kGPU;
  device_pointers_ = on_gpu_ && comm_->accepts_device_pointers();
  solver_->net().SetLossScale(1.0f / comm_->size());
  PlanReductions();
  solver_->AddCallback(this);
  worker_ = std::thread([this] { WorkerLoop(); });
}

ReplicaSync::~ReplicaSync() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutdown_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void ReplicaSync::PlanReductions() {
  const Net& net = solver_->net();
  const int num_layers = static_cast<int>(net.layers().size());
  final_after_layer_.assign(num_layers, {});
  const auto& owners = net.param_owners();
  const auto& learnable_ids = net.learnable_param_ids();
  for (size_t l = 0; l < learnable_ids.size(); ++l) {
    if (net.params_lr()[l] == 0.0f) continue;
    // Backward runs the execution order in reverse, and layers sharing a
    // param keep their prototxt order in it (an order group): the gradient
    // is final after the first layer (lowest index) that uses it and runs.
    int final_layer = -1;
    for (size_t p = 0; p < owners.size(); ++p) {
      const int owner = owners[p] < 0 ? static_cast<int>(p) : owners[p];
      if (owner != learnable_ids[l]) continue;
      const int layer_id = net.param_layer_indices()[p].first;
      if (!net.layer_need_backward()[layer_id]) continue;
      if (final_layer < 0 || layer_id < final_layer) final_layer = layer_id;
    }
    if (final_layer >= 0) final_after_layer_[final_layer].push_back(static_cast<int>(l));
  }
  for (const auto& layer : net.layers()) {
    if (!HasComputedParams(*layer)) continue;
    for (const auto& blob : layer->blobs()) computed_params_.push_back(blob.get());
  }
}

void ReplicaSync::BroadcastState() {
  Net& net = solver_->net();
  for (size_t p = 0; p < net.params().size(); ++p) {
    if (net.param_owners()[p] >= 0) continue;  // shares an owner's memory
    Blob& blob = *net.params()[p];
    comm_->Broadcast(DataFor(&blob), blob.count() * sizeof(float), 0);
  }
  for (const auto& history : solver_->history()) {
    comm_->Broadcast(DataFor(history.get()), history->count() * sizeof(float), 0);
  }
}

void ReplicaSync::AverageComputedParams() {
  const float scale = 1.0f / comm_->size();
  for (Blob* blob : computed_params_) {
    comm_->AllReduceSum(DataFor(blob), blob->count());
    blob->scale_data(scale);
  }
}

// ---- the iteration ----

void ReplicaSync::OnStart() { step_start_ = std::chrono::steady_clock::now(); }

void ReplicaSync::OnLayerBackward(int layer_id) {
  const std::vector<int>& params = final_after_layer_[layer_id];
  // The worker thread reads the gradients: they must be finished, not queued.
  if (on_gpu_ && !params.empty()) SynchronizeDevice();
  Enqueue(params);
}

float* ReplicaSync::DataFor(Blob* blob) {
  return device_pointers_ ? blob->mutable_gpu_data() : blob->mutable_cpu_data();
}

float* ReplicaSync::DiffFor(Blob* blob) {
  return device_pointers_ ? blob->mutable_gpu_diff() : blob->mutable_cpu_diff();
}

void ReplicaSync::Enqueue(const std::vector<int>& params) {
  if (params.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.insert(queue_.end(), params.begin(), params.end());
  }
  changed_.notify_all();
}

void ReplicaSync::OnGradientsReady() {
  const auto wait_start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return (queue_.empty() && in_flight_ == 0) || error_; });
  if (error_) std::rethrow_exception(error_);
  lock.unlock();
  const auto now = std::chrono::steady_clock::now();
  wait_seconds_ += std::chrono::duration<double>(now - wait_start).count();
  step_seconds_ += std::chrono::duration<double>(now - step_start_).count();
  ++steps_;
}

void ReplicaSync::WorkerLoop() {
  if (on_gpu_) SetCurrentDevice(solver_->context().device_id);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return shutdown_ || (!queue_.empty() && !error_); });
    if (shutdown_) return;
    const int param = queue_.front();
    queue_.pop_front();
    ++in_flight_;
    lock.unlock();
    try {
      Blob* blob = solver_->net().learnable_params()[param];
      comm_->AllReduceSum(DiffFor(blob), blob->count());
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      --in_flight_;
      changed_.notify_all();
      continue;
    }
    lock.lock();
    --in_flight_;
    changed_.notify_all();
  }
}

float ReplicaSync::ReduceLoss(float loss) {
  comm_->AllReduceSum(&loss, 1);
  return loss;
}

SolverAction ReplicaSync::AgreeOnAction(SolverAction action) {
  // Votes: one replica's stop stops all, one's snapshot snapshots all.
  float votes[2] = {ActionStops(action) ? 1.0f : 0.0f, ActionSnapshots(action) ? 1.0f : 0.0f};
  comm_->AllReduceSum(votes, 2);
  const bool stop = votes[0] > 0;
  const bool snapshot = votes[1] > 0;
  if (stop && snapshot) return SolverAction::kSnapshotStop;
  if (stop) return SolverAction::kStop;
  if (snapshot) return SolverAction::kSnapshot;
  return SolverAction::kNone;
}

}  // namespace demi
