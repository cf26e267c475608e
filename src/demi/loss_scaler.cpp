#include "demi/loss_scaler.hpp"

#include <cmath>

#include "demi/common.hpp"

namespace demi {

namespace {

/// GradScaler's initial scale.
constexpr float kDefaultDynamicScale = 65536.0f;
/// Below this the gradients overflowed some 150 times in a row: they are not
/// finite at any scale (a finite loss with NaN gradients is a bug of a layer
/// or of the data, which no scale fixes).
constexpr float kSmallestScale = 1.0f / 16777216.0f;  // 2^-24

}  // namespace

LossScaler::LossScaler(const NetParameter& net, const SolverParameter& solver)
    : dynamic_(net.global_grad_scale_adaptive()),
      growth_interval_(solver.loss_scale_growth_interval()),
      growth_factor_(solver.loss_scale_growth_factor()),
      backoff_factor_(solver.loss_scale_backoff_factor()) {
  const float given = net.global_grad_scale();
  DEMI_CHECK(std::isfinite(given) && given > 0, "net '", net.name(),
             "': global_grad_scale must be a positive finite number, got ", given);
  scale_ = dynamic_ && !net.has_global_grad_scale() ? kDefaultDynamicScale : given;
  enabled_ = dynamic_ || scale_ != 1.0f;
  if (!dynamic_) return;
  DEMI_CHECK(growth_interval_ > 0, "loss_scale_growth_interval must be positive, got ",
             growth_interval_);
  DEMI_CHECK(std::isfinite(growth_factor_) && growth_factor_ > 1,
             "loss_scale_growth_factor must be above 1, got ", growth_factor_);
  DEMI_CHECK(backoff_factor_ > 0 && backoff_factor_ < 1,
             "loss_scale_backoff_factor must be in (0, 1), got ", backoff_factor_);
}

void LossScaler::Update(bool overflow, int iter, bool logs) {
  if (!overflow) {
    if (dynamic_ && ++clean_steps_ == growth_interval_) {
      const float grown = scale_ * growth_factor_;
      // GradScaler keeps the scale where growing it would overflow a float.
      if (std::isfinite(grown)) scale_ = grown;
      clean_steps_ = 0;
    }
    return;
  }
  clean_steps_ = 0;
  if (!dynamic_) {
    LOG_IF(WARNING, logs) << "Iteration " << iter << ": gradients overflowed at the loss scale "
                          << scale_ << " (global_grad_scale); the step is skipped";
    return;
  }
  const float previous = scale_;
  scale_ *= backoff_factor_;
  LOG_IF(INFO, logs) << "Iteration " << iter << ": gradients overflowed; the step is skipped and "
                     << "the loss scale goes from " << previous << " to " << scale_;
  DEMI_CHECK(scale_ >= kSmallestScale, "iteration ", iter,
             ": the gradients are not finite even at the loss scale ", previous,
             " although the loss is; a layer or the data produce them (set debug_info: true in "
             "the solver to see each layer's gradients)");
}

void LossScaler::Save(SolverState* state) const {
  if (!enabled_) return;
  state->set_loss_scale(scale_);
  state->set_loss_scale_clean_steps(clean_steps_);
}

void LossScaler::Restore(const SolverState& state, const std::string& state_file) {
  if (!enabled_) return;
  if (!state.has_loss_scale()) {
    LOG(WARNING) << "'" << state_file << "' holds no loss scale; scaling starts again at "
                 << scale_;
    return;
  }
  DEMI_CHECK(std::isfinite(state.loss_scale()) && state.loss_scale() > 0, "'", state_file,
             "' holds the loss scale ", state.loss_scale(), ", which is not a positive number");
  // A static scale is the net's: a changed global_grad_scale wins.
  if (!dynamic_) return;
  scale_ = state.loss_scale();
  clean_steps_ = state.loss_scale_clean_steps();
}

}  // namespace demi
