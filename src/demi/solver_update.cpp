// The solver's update of the params at the end of an iteration: the learning
// rate's table, the diffs averaged, unscaled and clipped, then the rule's
// pass on the host or the GPU. The rest of the Solver is in solver.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "demi/solver.hpp"
#include "demi/util/device_math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void Solver::ApplyUpdate() {
  const float rate = GetLearningRate(param_, iter_);
  const int step = CurrentStep(param_, iter_);
  if (param_.lr_policy() == "multistep" && step != current_step_) {
    LOG_IF(INFO, is_root()) << "MultiStep Status: Iteration " << iter_ << ", step = " << step;
  }
  current_step_ = step;
  if (param_.display() && iter_ % param_.display() == 0 && is_root()) {
    LOG(INFO) << "Iteration " << iter_ << ", lr = " << rate;
  }
  FillUpdateTable(rate);
  if (net_->param_block().floats() == 0) return;
#ifdef CPU_ONLY
  const Device device = Device::kCPU;
#else
  const Device device = context_.device;
#endif
  bool finite = true;
  const UpdateBlocks blocks = PrepareUpdate(device, &finite);
  if (loss_scaler_.enabled()) {
    const float scale = loss_scaler_.scale();
    loss_scaler_.Update(!finite, iter_, is_root());
    if (loss_scaler_.scale() != scale) net_->SetGradientScale(loss_scaler_.scale());
    if (!finite) return;
  }
  const UpdateConstants constants = Constants();
#ifndef CPU_ONLY
  if (device == Device::kGPU) {
    UpdateOnGpu(blocks, constants);
    return;
  }
#endif
  UpdateOnCpu(blocks, constants);
}

void Solver::FillUpdateTable(float rate) {
  const auto& segments = net_->param_block().segments();
  update_rows_.resize(segments.size());
  max_row_count_ = 0;
  for (size_t p = 0; p < segments.size(); ++p) {
    UpdateRow& row = update_rows_[p];
    row.offset = segments[p].offset;
    row.count = segments[p].count;
    row.rate = LocalRate(static_cast<int>(p), rate);
    row.decay = param_.weight_decay() * net_->params_weight_decay()[p];
    max_row_count_ = std::max(max_row_count_, row.count);
  }
}

UpdateConstants Solver::Constants() const {
  UpdateConstants constants;
  constants.l1 = param_.regularization_type() == "L1";
  constants.momentum = param_.momentum();
  constants.momentum2 = param_.momentum2();
  constants.decay = param_.rms_decay();
  constants.delta = param_.delta();
  return constants;
}

float Solver::ClipScale(Device device, const float* diff) const {
  const float clip = param_.clip_gradients();
  if (clip < 0) return 1.0f;
  // Row by row in order: the same sum on every replica and every run.
  double sumsq = 0;
  for (const UpdateRow& row : update_rows_) {
    sumsq += row.count ? Sumsq(device, row.count, diff + row.offset) : 0.0;
  }
  const double norm = std::sqrt(sumsq);
  if (norm <= clip) return 1.0f;
  const float scale = static_cast<float>(clip / norm);
  LOG(INFO) << "Gradient clipping: scaling down gradients (L2 norm " << norm << " > " << clip
            << ") by scale factor " << scale;
  return scale;
}

namespace {

/// The whole of `block` on `device`, marked written there.
float* MutableOn(Device device, ViewBlock* block) {
  return device == Device::kGPU ? block->mutable_gpu() : block->mutable_cpu();
}

}  // namespace

UpdateBlocks Solver::PrepareUpdate(Device device, bool* finite) {
  ParamBlock& block = net_->param_block();
  const int64_t n = block.floats();
  float* diff = MutableOn(device, &block.diff());
  if (loss_scaler_.enabled()) {
    // The overflow check in the pass that unscales.
    const float unscale = 1.0f / (static_cast<float>(param_.iter_size()) * loss_scaler_.scale());
    bool overflow = !ScalAllFinite(device, n, unscale, diff);
    for (Callback* callback : callbacks_) overflow = callback->AgreeOnOverflow(overflow);
    *finite = !overflow;
    if (overflow) return UpdateBlocks{};
  } else if (param_.iter_size() > 1) {
    Scal(device, n, 1.0f / param_.iter_size(), diff);
  }
  const float clip_scale = ClipScale(device, diff);
  if (clip_scale != 1.0f) Scal(device, n, clip_scale, diff);
  UpdateBlocks blocks;
  blocks.data = MutableOn(device, &block.data());
  blocks.diff = diff;
  float* history = MutableOn(device, &history_block_);
  for (int set = 0; set < history_sets_; ++set) blocks.history[set] = history + set * n;
  return blocks;
}

void Solver::UpdateOnCpu(const UpdateBlocks& blocks, const UpdateConstants& constants) {
  const int64_t n = net_->param_block().floats();
  ParallelForSegments(update_rows_, n, [&](int r, int64_t begin, int64_t end) {
    UpdateFloats(update_rows_[r], begin, end, blocks, constants);
  });
}

#ifndef CPU_ONLY
void Solver::UpdateOnGpu(const UpdateBlocks& blocks, const UpdateConstants& constants) {
  // The table changes with the learning rate: a few KiB to the device.
  const size_t table_bytes = update_rows_.size() * sizeof(UpdateRow);
  update_table_.Resize(table_bytes);
  std::memcpy(update_table_.mutable_cpu_data(), update_rows_.data(), table_bytes);
  const auto* rows = static_cast<const UpdateRow*>(update_table_.gpu_data());
  GpuUpdate(rule_, rows, static_cast<int>(update_rows_.size()), max_row_count_, blocks, constants);
}
#endif

}  // namespace demi
