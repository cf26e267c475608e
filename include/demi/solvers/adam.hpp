#ifndef DEMI_SOLVERS_ADAM_HPP_
#define DEMI_SOLVERS_ADAM_HPP_

#include "demi/solver.hpp"

namespace demi {

/// The step of AdamSolver (below) for one float, on the host and the GPU.
struct AdamRule {
  static constexpr UpdateRule kRule = UpdateRule::kAdam;
  DEMI_HOST_DEVICE float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                                    const UpdateConstants& c) const {
    float* m = b.history[0];
    float* v = b.history[1];
    m[i] = AddRn(MulRn(c.momentum, m[i]), MulRn(SubRn(1.0f, c.momentum), g));
    v[i] = AddRn(MulRn(c.momentum2, v[i]), MulRn(MulRn(SubRn(1.0f, c.momentum2), g), g));
    const float step_rate = MulRn(rate, c.correction);
    return DivRn(MulRn(step_rate, m[i]), AddRn(SqrtRn(v[i]), c.delta));
  }
};

/// @brief Adam (Kingma and Ba, 2014) with Caffe's bias correction, beta1 =
/// momentum, beta2 = momentum2, eps = delta, t = iteration + 1:
///   m <- beta1 * m + (1 - beta1) * g;   v <- beta2 * v + (1 - beta2) * g^2
///   w <- w - lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps)
/// History: m (set 0) and v (set 1). beta1 and beta2 in [0, 1).
class AdamSolver : public RuleSolver<AdamRule> {
 public:
  explicit AdamSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "Adam"; }

 protected:
  /// Adds the bias correction of this iteration.
  UpdateConstants Constants() const override;
};

}  // namespace demi

#endif  // DEMI_SOLVERS_ADAM_HPP_
