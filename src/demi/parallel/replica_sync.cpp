#include "demi/parallel/replica_sync.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "demi/util/device.hpp"
#include "demi/util/threads.hpp"

namespace demi {

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

ReplicaSync::ReplicaSync(Solver* solver, Communicator* comm, size_t bucket_bytes)
    : solver_(solver), comm_(comm), bucket_bytes_(bucket_bytes) {
  CHECK(solver_ && comm_);
  CHECK_EQ(solver_->context().replica, comm_->rank());
  on_gpu_ = solver_->context().device == Device::kGPU;
  device_pointers_ = on_gpu_ && comm_->accepts_device_pointers();
  // Queued where the communicator reads the memory the solver computes in
  // (NCCL with a GPU solver, not with a CPU one).
  queues_ = comm_->queues_collectives() && device_pointers_ == comm_->accepts_device_pointers();
  PlanReductions();
  if (on_gpu_ && !queues_) {
    for (size_t b = 0; b < buckets_.size(); ++b) {
      bucket_ready_.push_back(std::make_unique<StreamMarker>());
    }
  }
  worker_ = StartThread([this] { WorkerLoop(); });
}

void ReplicaSync::Attach() {
  if (attached_) return;
  attached_ = true;
  solver_->net().SetLossScale(1.0f / comm_->size());
  solver_->AddCallback(this);
}

ReplicaSync::~ReplicaSync() {
  // The solver may train on alone (a pycaffe NCCL collected first).
  if (attached_) {
    solver_->RemoveCallback(this);
    solver_->net().SetLossScale(1.0f);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutdown_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void ReplicaSync::PlanReductions() {
  const Net& net = solver_->net();
  const std::vector<int> final_layer = FinalLayers();
  final_after_layer_.assign(net.layers().size(), {});
  for (size_t l = 0; l < final_layer.size(); ++l) {
    if (final_layer[l] >= 0) final_after_layer_[final_layer[l]].push_back(static_cast<int>(l));
  }
  PlanBuckets(final_layer);
  PlanHandOvers();
  for (const auto& layer : net.layers()) {
    if (!HasComputedParams(*layer)) continue;
    for (const auto& blob : layer->blobs()) computed_params_.push_back(blob.get());
  }
}

void ReplicaSync::PlanHandOvers() {
  // OnLayerBackward's counting, in the order backward runs the hooks.
  const Net& net = solver_->net();
  std::vector<int> pending(buckets_.size());
  for (size_t b = 0; b < buckets_.size(); ++b) pending[b] = buckets_[b].reduced_params;
  hands_over_after_.assign(net.layers().size(), false);
  for (int step = static_cast<int>(net.layers().size()) - 1; step >= 0; --step) {
    for (int layer_id : net.BackwardHookLayers(step)) {
      for (int param : final_after_layer_[layer_id]) {
        if (--pending[bucket_of_param_[param]] == 0) hands_over_after_[layer_id] = true;
      }
    }
  }
}

std::vector<int> ReplicaSync::FinalLayers() const {
  const Net& net = solver_->net();
  const auto& owners = net.param_owners();
  const auto& learnable_ids = net.learnable_param_ids();
  std::vector<int> final_layer(net.learnable_params().size(), -1);
  for (size_t p = 0; p < owners.size(); ++p) {
    const int owner = owners[p] < 0 ? static_cast<int>(p) : owners[p];
    const int l = learnable_ids[owner];
    if (net.params_lr()[l] == 0.0f) continue;
    // Backward runs the execution order in reverse, and layers sharing a
    // param keep their prototxt order in it (an order group): the gradient
    // is final after the first layer (lowest index) that uses it and runs.
    const int layer_id = net.param_layer_indices()[p].first;
    if (!net.layer_need_backward()[layer_id]) continue;
    if (final_layer[l] < 0 || layer_id < final_layer[l]) final_layer[l] = layer_id;
  }
  return final_layer;
}

void ReplicaSync::PlanBuckets(const std::vector<int>& final_layer) {
  const auto& segments = solver_->net().param_block().segments();
  bucket_of_param_.assign(segments.size(), -1);
  // From the last param back: backward finishes them in about that order.
  // A bucket spans its params' range of the block, gaps (zeros) and
  // params that are not reduced (zero gradients) included.
  for (int l = static_cast<int>(segments.size()) - 1; l >= 0; --l) {
    if (final_layer[l] < 0) continue;
    const int64_t end = segments[l].offset + segments[l].count;
    const bool starts_new =
        buckets_.empty() || buckets_.back().count * sizeof(float) >= bucket_bytes_;
    // A new bucket starts as the empty range at its first param's end.
    if (starts_new) buckets_.push_back(Bucket{end, 0, {}, 0});
    Bucket& bucket = buckets_.back();
    bucket.count += bucket.offset - segments[l].offset;
    bucket.offset = segments[l].offset;
    bucket.params.push_back(l);
    bucket_of_param_[l] = static_cast<int>(buckets_.size()) - 1;
  }
  for (Bucket& bucket : buckets_) bucket.reduced_params = static_cast<int>(bucket.params.size());
  pending_.assign(buckets_.size(), 0);
  int64_t floats = 0;
  for (const Bucket& bucket : buckets_) floats += bucket.count;
  LOG_IF(INFO, solver_->is_root()) << "All-reduce: " << buckets_.size() << " bucket(s) of up to "
                                   << bucket_bytes_ / (1024.0 * 1024.0) << " MiB for "
                                   << floats * sizeof(float) / 1048576.0 << " MiB of gradients";
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

SolverState ReplicaSync::GatherReplicaStates(SolverState state) {
  // The communicator has no gather: each replica broadcasts its part in
  // turn (a few hundred bytes of positions and a few KiB of random streams,
  // once per test or snapshot).
  const bool root = comm_->rank() == 0;
  SolverState all;
  for (int sender = 0; sender < comm_->size(); ++sender) {
    std::string bytes;
    if (sender == comm_->rank()) {
      DEMI_CHECK(state.SerializeToString(&bytes), "replica ", sender,
                 ": its read positions and random streams cannot be serialized");
    }
    uint64_t size = bytes.size();
    comm_->Broadcast(&size, sizeof(size), sender);
    if (size == 0) continue;
    bytes.resize(size);
    comm_->Broadcast(bytes.data(), size, sender);
    if (!root) continue;
    SolverState part;
    DEMI_CHECK(part.ParseFromString(bytes), "replica ", sender,
               "'s read positions and random streams arrived unreadable (", size, " bytes)");
    all.MergeFrom(part);
  }
  return root ? all : state;
}

// ---- the iteration ----

void ReplicaSync::OnStart() {
  ThrowIfFailed();
  step_start_ = std::chrono::steady_clock::now();
  for (size_t b = 0; b < buckets_.size(); ++b) pending_[b] = buckets_[b].reduced_params;
}

void ReplicaSync::OnLayerBackward(int layer_id) {
  std::vector<int> complete;
  for (int param : final_after_layer_[layer_id]) {
    const int b = bucket_of_param_[param];
    if (--pending_[b] == 0) complete.push_back(b);
  }
  handed_over_ += static_cast<int64_t>(complete.size());
  if (queues_) {
    // Queued behind the backward this thread's stream holds: the device
    // reduces each bucket once computed, and nothing here waits; the worker
    // watches each from now on, for a failure or the timeout (a comm it
    // broke refuses the next queue; its error is thrown at the step's end).
    for (int b : complete) {
      comm_->QueueAllReduceSum(BucketStart(b), static_cast<size_t>(buckets_[b].count));
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++collectives_;
      }
      Enqueue({kWatch});
    }
    return;
  }
  // The worker reduces a bucket once its gradients have been computed, not
  // just queued: it waits for a mark in this thread's stream, which goes on
  // with backward meanwhile.
  if (on_gpu_) {
    for (int b : complete) bucket_ready_[b]->Record();
  }
  Enqueue(complete);
}

void ReplicaSync::ThrowIfFailed() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_) std::rethrow_exception(error_);
}

float* ReplicaSync::BucketStart(int b) {
  // Every param of the bucket is final and no other thread touches it: make
  // each current where the communicator reads (a GPU net reduced through
  // host memory copies them there), then hand over the whole range.
  // The last param added (the lowest offset) starts the range.
  float* start = nullptr;
  for (int param : buckets_[b].params) start = DiffFor(solver_->net().learnable_params()[param]);
  return start;
}

float* ReplicaSync::DataFor(Blob* blob) {
  return device_pointers_ ? blob->mutable_gpu_data() : blob->mutable_cpu_data();
}

float* ReplicaSync::DiffFor(Blob* blob) {
  return device_pointers_ ? blob->mutable_gpu_diff() : blob->mutable_cpu_diff();
}

void ReplicaSync::Enqueue(const std::vector<int>& buckets) {
  if (buckets.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.insert(queue_.end(), buckets.begin(), buckets.end());
  }
  changed_.notify_all();
}

void ReplicaSync::Reduce(int b) {
  if (b == kWatch) {
    comm_->WaitQueued();
    return;
  }
  if (on_gpu_) bucket_ready_[b]->Wait();
  comm_->AllReduceSum(BucketStart(b), static_cast<size_t>(buckets_[b].count));
}

void ReplicaSync::OnGradientsReady() {
  // Every bucket left in this backward, or this replica's gradients would
  // go unreduced and the replicas' params part ways without a word (a
  // backward hook that did not run: a bug, never bad input).
  const auto handed_over = std::count(pending_.begin(), pending_.end(), 0);
  DEMI_CHECK(handed_over == static_cast<int64_t>(buckets_.size()), "replica ", comm_->rank(),
             ": backward handed ", handed_over, " of ", buckets_.size(),
             " gradient buckets over to the all-reduce this iteration; the replicas' params "
             "would part ways");
  if (queues_) {
    // The update queued next waits on the device; a failure the worker
    // finds is thrown here or at the next step's start.
    ThrowIfFailed();
    comm_->JoinQueued();
  } else {
    const auto wait_start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return (queue_.empty() && in_flight_ == 0) || error_; });
    if (error_) std::rethrow_exception(error_);
    wait_seconds_ += SecondsSince(wait_start);
  }
  step_seconds_ += SecondsSince(step_start_);
  ++steps_;
}

void ReplicaSync::WorkerLoop() {
  if (on_gpu_) SetCurrentDevice(solver_->context().device_id);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return shutdown_ || (!queue_.empty() && !error_); });
    if (shutdown_) return;
    const int bucket = queue_.front();
    queue_.pop_front();
    ++in_flight_;
    if (bucket != kWatch) ++collectives_;
    lock.unlock();
    try {
      Reduce(bucket);
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

void ReplicaSync::ReduceOutputs(std::vector<float>* values) {
  if (values->empty()) return;
  comm_->AllReduceSum(values->data(), values->size());
  for (float& value : *values) value /= static_cast<float>(comm_->size());
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

bool ReplicaSync::AgreeOnOverflow(bool overflow) {
  float votes = overflow ? 1.0f : 0.0f;
  comm_->AllReduceSum(&votes, 1);
  return votes > 0;
}

}  // namespace demi
