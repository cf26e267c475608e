#ifndef DEMI_SOLVERS_ADADELTA_HPP_
#define DEMI_SOLVERS_ADADELTA_HPP_

#include "demi/solver.hpp"

namespace demi {

/// The step of AdaDeltaSolver (below) for one float, on the host and the GPU.
struct AdaDeltaRule {
  static constexpr UpdateRule kRule = UpdateRule::kAdaDelta;
  DEMI_HOST_DEVICE float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                                    const UpdateConstants& c) const {
    float* grad_sq = b.history[0];
    float* step_sq = b.history[1];
    const float rho = c.momentum;
    grad_sq[i] = AddRn(MulRn(rho, grad_sq[i]), MulRn(MulRn(SubRn(1.0f, rho), g), g));
    const float step =
        MulRn(g, SqrtRn(DivRn(AddRn(step_sq[i], c.delta), AddRn(grad_sq[i], c.delta))));
    step_sq[i] = AddRn(MulRn(rho, step_sq[i]), MulRn(MulRn(SubRn(1.0f, rho), step), step));
    return MulRn(rate, step);
  }
};

/// @brief AdaDelta (Zeiler, 2012), with momentum as the decay rho and the
/// learning rate (usually 1) scaling the step:
///   Eg <- rho * Eg + (1 - rho) * g^2
///   d  <- g * sqrt((Ed + delta) / (Eg + delta))
///   Ed <- rho * Ed + (1 - rho) * d^2;   w <- w - lr * d
/// History: Eg (set 0) and Ed (set 1). momentum in [0, 1).
class AdaDeltaSolver : public RuleSolver<AdaDeltaRule> {
 public:
  explicit AdaDeltaSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "AdaDelta"; }
};

}  // namespace demi

#endif  // DEMI_SOLVERS_ADADELTA_HPP_
