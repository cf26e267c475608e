#ifndef DEMI_SOLVERS_RMSPROP_HPP_
#define DEMI_SOLVERS_RMSPROP_HPP_

#include "demi/solver.hpp"

namespace demi {

/// The step of RMSPropSolver (below) for one float, on the host and the GPU.
struct RMSPropRule {
  static constexpr UpdateRule kRule = UpdateRule::kRMSProp;
  DEMI_HOST_DEVICE float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                                    const UpdateConstants& c) const {
    float* mean_sq = b.history[0];
    mean_sq[i] = AddRn(MulRn(c.decay, mean_sq[i]), MulRn(MulRn(SubRn(1.0f, c.decay), g), g));
    return DivRn(MulRn(rate, g), AddRn(SqrtRn(mean_sq[i]), c.delta));
  }
};

/// @brief RMSProp (Tieleman and Hinton, 2012):
///   h <- rms_decay * h + (1 - rms_decay) * g^2;   w <- w - lr * g / (sqrt(h) + delta)
/// History: h. momentum must be 0; rms_decay in [0, 1).
class RMSPropSolver : public RuleSolver<RMSPropRule> {
 public:
  explicit RMSPropSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "RMSProp"; }
};

}  // namespace demi

#endif  // DEMI_SOLVERS_RMSPROP_HPP_
