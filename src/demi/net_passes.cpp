// Running a net: its forward and backward passes (and the reshaping a layer
// that shapes its tops in Forward asks of the layers after it), the loss
// weights its loss tops' diffs hold, re-planning, the update and the debug
// lines. Building it is net.cpp's.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "demi/net.hpp"
#include "demi/util/device.hpp"
#include "demi/util/gpu_math.hpp"
#include "demi/util/math.hpp"
#ifndef CPU_ONLY
#include "demi/util/math_gpu.hpp"
#endif

namespace demi {

namespace {

/// The shapes of a layer's tops, and which were views into the arena,
/// before a Forward that may reshape them (Layer::ForwardReshapesTops).
class TopsBefore {
 public:
  TopsBefore() = default;
  explicit TopsBefore(const std::vector<Blob*>& tops) {
    for (const Blob* top : tops) {
      shapes_.push_back(top->shape());
      views_.push_back(top->data()->is_view());
      diff_views_.push_back(top->diff()->is_view());
    }
  }
  bool ShapeChanged(const std::vector<Blob*>& tops) const {
    for (size_t t = 0; t < tops.size(); ++t) {
      if (tops[t]->shape() != shapes_[t]) return true;
    }
    return false;
  }
  /// Whether a top's data or diff grew past its planned bytes: it then left
  /// the arena for memory of its own (SyncedMemory::Resize), right but
  /// unplanned.
  bool LeftArena(const std::vector<Blob*>& tops) const {
    for (size_t t = 0; t < tops.size(); ++t) {
      if ((views_[t] && !tops[t]->data()->is_view()) ||
          (diff_views_[t] && !tops[t]->diff()->is_view())) {
        return true;
      }
    }
    return false;
  }

 private:
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<bool> views_, diff_views_;
};

bool HasLossTop(const Layer& layer, size_t num_tops) {
  for (size_t t = 0; t < num_tops; ++t) {
    if (layer.loss(static_cast<int>(t)) != 0.0f) return true;
  }
  return false;
}

}  // namespace

float Net::ForwardFromTo(int start, int end) {
  forward_loss_.Clear();  // what a Forward that threw left
  ForwardAddingLoss(start, end, forward_loss_.Add(0));
  const float sum = forward_loss_.Take().front().value;
  CheckDeferredErrors();
  return sum;
}

void Net::ForwardAddingLoss(int start, int end, float* loss) {
  DEMI_CHECK(start >= 0 && end < static_cast<int>(layers_.size()), "net '", name_,
             "': no forward steps ", start, " to ", end, " among ", layers_.size());
  if (start == 0 && replan_pending_) {
    // A blob grew out of the arena in the last pass: plan for the shapes now
    // (in the same order: see Init), and again next pass if this throws.
    PlanMemory();
    replan_pending_ = false;
  }
  // A layer weighs its loss by its tops' diffs, which hold the gradient
  // scale too (exact to divide out when it is a power of two).
  if (start == 0) reshaping_ = false;
  for (int step = start; step <= end; ++step) {
    const int i = execution_order_[step];
    // As Caffe's Layer::Forward: a layer that may shape its tops, and every
    // layer after a changed shape, is reshaped first, just before it runs
    // (its bottoms are this pass's then).
    const bool reshape = reshaping_ || layers_[i]->ForwardReshapesTops();
    const TopsBefore before = reshape ? TopsBefore(top_vecs_[i]) : TopsBefore();
    if (reshape) {
      layers_[i]->Reshape(bottom_vecs_[i], top_vecs_[i]);
      // A loss top reshaped past its capacity lost its weight: seeded
      // before the layer weighs its loss with it.
      if (HasLossTop(*layers_[i], top_vecs_[i].size()) && before.ShapeChanged(top_vecs_[i])) {
        SeedLossDiffs();
      }
    }
    layers_[i]->ForwardAddingLoss(bottom_vecs_[i], top_vecs_[i], loss, gradient_scale_);
    if (debug_info_) LogForwardDebugInfo(i);
    if (!reshape) continue;
    reshaping_ = reshaping_ || before.ShapeChanged(top_vecs_[i]);
    replan_pending_ = replan_pending_ || before.LeftArena(top_vecs_[i]);
  }
}

void Net::CheckDeferredErrors() {
  for (const std::shared_ptr<Layer>& layer : layers_) layer->CheckDeferredErrors();
}

float Net::Forward() { return ForwardFromTo(0, static_cast<int>(layers_.size()) - 1); }

void Net::BackwardFromTo(int start, int end) {
  DEMI_CHECK(end >= 0 && start < static_cast<int>(layers_.size()), "net '", name_,
             "': no backward steps ", start, " to ", end, " among ", layers_.size());
  for (int step = start; step >= end; --step) {
    const int i = execution_order_[step];
    if (!layer_need_backward_[i]) continue;
    if (!recomputation_.replays.empty()) {
      for (int replayed_step : recomputation_.replays[step]) {
        const int replayed = execution_order_[replayed_step];
        layers_[replayed]->Replay(bottom_vecs_[replayed], top_vecs_[replayed]);
      }
    }
    if (layers_[i]->absorbed()) continue;  // its absorber computes its gradients
    layers_[i]->Backward(top_vecs_[i], bottom_need_backward_[i], bottom_vecs_[i]);
    if (debug_info_) LogBackwardDebugInfo(i);
    RunBackwardHooks(step);
  }
}

bool Net::BackwardStepIdle(int step) const {
  const int i = execution_order_[step];
  if (!layer_need_backward_[i]) return true;
  const bool replays = !recomputation_.replays.empty() && !recomputation_.replays[step].empty();
  return layers_[i]->absorbed() && !replays;
}

std::vector<int> Net::BackwardHookLayers(int step) const {
  std::vector<int> layers;
  ForEachBackwardHookLayer(step, [&layers](int layer_id) { layers.push_back(layer_id); });
  return layers;
}

void Net::RunBackwardHooks(int step) const {
  if (!layer_backward_hook_) return;
  ForEachBackwardHookLayer(step, layer_backward_hook_);
}

void Net::SetLossScale(float scale) {
  DEMI_CHECK(scale > 0 && std::isfinite(scale), "loss scale must be positive, got ", scale);
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = *layers_[i];
    for (size_t t = 0; t < top_vecs_[i].size(); ++t) {
      const float weight = layer.loss(static_cast<int>(t));
      if (weight == 0.0f) continue;
      layer.set_loss(static_cast<int>(t), weight / loss_scale_ * scale);
    }
  }
  loss_scale_ = scale;
  SeedLossDiffs();
}

void Net::SetGradientScale(float scale) {
  DEMI_CHECK(scale > 0 && std::isfinite(scale), "gradient scale must be positive, got ", scale);
  gradient_scale_ = scale;
  SeedLossDiffs();
}

void Net::SeedLossDiffs() {
  for (size_t i = 0; i < layers_.size(); ++i) {
    for (size_t t = 0; t < top_vecs_[i].size(); ++t) {
      const float weight = layers_[i]->loss(static_cast<int>(t));
      if (weight == 0.0f) continue;
      Set(top_vecs_[i][t]->count(), weight * gradient_scale_, top_vecs_[i][t]->mutable_cpu_diff());
    }
  }
}

void Net::Backward() {
  BackwardFromTo(static_cast<int>(layers_.size()) - 1, 0);
  if (!debug_info_) return;
  double asum_data = 0, asum_diff = 0, sumsq_data = 0, sumsq_diff = 0;
  for (const Blob* param : learnable_params_) {
    asum_data += param->asum_data();
    asum_diff += param->asum_diff();
    sumsq_data += param->sumsq_data();
    sumsq_diff += param->sumsq_diff();
  }
  LOG(INFO) << "    [Backward] All net params (data, diff): L1 norm = (" << asum_data << ", "
            << asum_diff << "); L2 norm = (" << std::sqrt(sumsq_data) << ", "
            << std::sqrt(sumsq_diff) << ")";
}

float Net::ForwardBackward() {
  const float loss = Forward();
  Backward();
  return loss;
}

void Net::Reshape() {
  SetLayersSettling(context_.device == Device::kGPU);
  ReshapeLayers();
  SettleLayouts();
  PlanMemory();
}

void Net::ReshapeLayers() {
  for (size_t i = 0; i < layers_.size(); ++i) layers_[i]->Reshape(bottom_vecs_[i], top_vecs_[i]);
}

void Net::ClearParamDiffs() {
  ViewBlock& diff = param_block_.diff();
  if (diff.bytes() == 0) return;
  if (context_.device == Device::kGPU) {
    DeviceMemset(diff.mutable_gpu(), 0, diff.bytes());
    return;
  }
  std::memset(diff.mutable_cpu(), 0, diff.bytes());
}

void Net::Update() {
  if (param_block_.data().floats() != param_block_.floats()) {
    // The data block was released (this net reads another net's params):
    // update blob by blob, in whatever memory each param now has.
    for (Blob* param : learnable_params_) param->Update();
    return;
  }
  // The gaps between params are zeros in both blocks and stay zeros.
  const int64_t n = param_block_.floats();
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) {
    GpuAxpy(n, -1.0f, param_block_.diff().gpu(), param_block_.data().mutable_gpu());
    return;
  }
#endif
  Axpy(n, -1.0f, param_block_.diff().cpu(), param_block_.data().mutable_cpu());
}

void Net::LogForwardDebugInfo(int layer_id) const {
  for (size_t i = 0; i < top_vecs_[layer_id].size(); ++i) {
    const Blob& blob = *top_vecs_[layer_id][i];
    LOG(INFO) << "    [Forward] Layer " << layer_names_[layer_id] << ", top blob "
              << blob_names_[top_id_vecs_[layer_id][i]]
              << " data: " << blob.asum_data() / std::max<int64_t>(blob.count(), 1);
  }
  const auto& params = layers_[layer_id]->blobs();
  for (size_t p = 0; p < params.size(); ++p) {
    LOG(INFO) << "    [Forward] Layer " << layer_names_[layer_id] << ", param blob " << p
              << " data: " << params[p]->asum_data() / std::max<int64_t>(params[p]->count(), 1);
  }
}

void Net::LogBackwardDebugInfo(int layer_id) const {
  for (size_t i = 0; i < bottom_vecs_[layer_id].size(); ++i) {
    if (!bottom_need_backward_[layer_id][i]) continue;
    const Blob& blob = *bottom_vecs_[layer_id][i];
    LOG(INFO) << "    [Backward] Layer " << layer_names_[layer_id] << ", bottom blob "
              << blob_names_[bottom_id_vecs_[layer_id][i]]
              << " diff: " << blob.asum_diff() / std::max<int64_t>(blob.count(), 1);
  }
  const auto& params = layers_[layer_id]->blobs();
  for (size_t p = 0; p < params.size(); ++p) {
    if (!layers_[layer_id]->param_propagate_down(static_cast<int>(p))) continue;
    LOG(INFO) << "    [Backward] Layer " << layer_names_[layer_id] << ", param blob " << p
              << " diff: " << params[p]->asum_diff() / std::max<int64_t>(params[p]->count(), 1);
  }
}

}  // namespace demi
