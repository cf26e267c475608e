#ifndef DEMI_LOSS_SCALER_HPP_
#define DEMI_LOSS_SCALER_HPP_

#include "demi/proto/demi.pb.h"

namespace demi {

/// @brief Loss scaling for 16-bit gradients: backward starts from the loss
/// weights times `scale()` (Net::SetGradientScale), so every gradient is scaled and small ones do
/// not flush to zero in FLOAT16; the solver divides the scale out of the diff block in the same
/// pass that checks it for infinities and NaNs, before clipping and the update. An iteration whose
/// gradients are not finite (an overflow, on any replica: they agree on it) updates nothing.
///
/// Static (the net's global_grad_scale): a fixed scale; an overflow skips
/// the step and warns. Dynamic (global_grad_scale_adaptive; NVCaffe scales by
/// the gradients' norm there, we follow PyTorch's GradScaler): the scale
/// starts at global_grad_scale when the net gives one, else 2^16; an overflow
/// skips the step and multiplies the scale by loss_scale_backoff_factor (0.5);
/// loss_scale_growth_interval (2000) clean steps in a row multiply it by
/// loss_scale_growth_factor (2). Both numbers live in the .solverstate, so a
/// resumed run scales exactly as an uninterrupted one.
///
/// Scales are powers of two by default, so scaling and unscaling a FLOAT
/// gradient is exact unless it overflows: a FLOAT net trains bit-identically
/// with and without a power-of-two scale.
class LossScaler {
 public:
  /// Off: scale 1, never changes.
  LossScaler() = default;
  /// From the train net's fields and the solver's; throws naming the field
  /// of a value no run can mean.
  LossScaler(const NetParameter& net, const SolverParameter& solver);

  /// Whether gradients are scaled and checked at all.
  bool enabled() const { return enabled_; }
  bool dynamic() const { return dynamic_; }
  float scale() const { return scale_; }
  /// Clean (finite) steps since the scale last changed.
  int clean_steps() const { return clean_steps_; }

  /// After iteration `iter`'s gradients were checked: counts a clean step
  /// (and grows the scale when due), or on `overflow` backs the scale off
  /// and logs the skipped step (where `logs`: the root replica, the others
  /// doing the same). Throws when the scale has fallen so low that the
  /// gradients are plainly not finite at any scale.
  void Update(bool overflow, int iter, bool logs = true);

  /// The state a snapshot keeps, and resuming from it.
  void Save(SolverState* state) const;
  void Restore(const SolverState& state, const std::string& state_file);

 private:
  bool enabled_ = false;
  bool dynamic_ = false;
  float scale_ = 1.0f;
  int clean_steps_ = 0;
  int growth_interval_ = 2000;
  float growth_factor_ = 2.0f;
  float backoff_factor_ = 0.5f;
};

}  // namespace demi

#endif  // DEMI_LOSS_SCALER_HPP_
