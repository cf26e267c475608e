#ifndef DEMI_SOLVERS_SGD_HPP_
#define DEMI_SOLVERS_SGD_HPP_

#include "demi/solver.hpp"

namespace demi {

/// The step of SGDSolver (below) for one float, on the host and the GPU.
/// Without momentum the old v is never read (it could be anything).
struct SGDRule {
  static constexpr UpdateRule kRule = UpdateRule::kSGD;
  DEMI_HOST_DEVICE float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                                    const UpdateConstants& c) const {
    float* v = b.history[0];
    v[i] = c.momentum == 0.0f ? MulRn(rate, g) : AddRn(MulRn(rate, g), MulRn(c.momentum, v[i]));
    return v[i];
  }
};

/// @brief Stochastic gradient descent with momentum, as in Caffe:
///   v <- momentum * v + lr * g;   w <- w - v
/// with g the regularized gradient and lr the rate times the param's
/// lr_mult. History: v.
class SGDSolver : public RuleSolver<SGDRule> {
 public:
  explicit SGDSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "SGD"; }
};

}  // namespace demi

#endif  // DEMI_SOLVERS_SGD_HPP_
