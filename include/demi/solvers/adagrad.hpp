#ifndef DEMI_SOLVERS_ADAGRAD_HPP_
#define DEMI_SOLVERS_ADAGRAD_HPP_

#include "demi/solver.hpp"

namespace demi {

/// The step of AdaGradSolver (below) for one float, on the host and the GPU.
struct AdaGradRule {
  static constexpr UpdateRule kRule = UpdateRule::kAdaGrad;
  DEMI_HOST_DEVICE float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                                    const UpdateConstants& c) const {
    float* sum_sq = b.history[0];
    sum_sq[i] = AddRn(sum_sq[i], MulRn(g, g));
    return DivRn(MulRn(rate, g), AddRn(SqrtRn(sum_sq[i]), c.delta));
  }
};

/// @brief AdaGrad (Duchi et al., 2011):
///   h <- h + g^2;   w <- w - lr * g / (sqrt(h) + delta)
/// History: h. momentum must be 0.
class AdaGradSolver : public RuleSolver<AdaGradRule> {
 public:
  explicit AdaGradSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "AdaGrad"; }
};

}  // namespace demi

#endif  // DEMI_SOLVERS_ADAGRAD_HPP_
