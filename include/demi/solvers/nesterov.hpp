#ifndef DEMI_SOLVERS_NESTEROV_HPP_
#define DEMI_SOLVERS_NESTEROV_HPP_

#include "demi/solver.hpp"

namespace demi {

/// The step of NesterovSolver (below) for one float, on the host and the GPU.
struct NesterovRule {
  static constexpr UpdateRule kRule = UpdateRule::kNesterov;
  DEMI_HOST_DEVICE float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                                    const UpdateConstants& c) const {
    float* v = b.history[0];
    const float previous = v[i];
    v[i] = AddRn(MulRn(c.momentum, v[i]), MulRn(rate, g));
    return SubRn(MulRn(AddRn(1.0f, c.momentum), v[i]), MulRn(c.momentum, previous));
  }
};

/// @brief Nesterov's accelerated gradient in Caffe's form (Sutskever et al.,
/// 2013; Bengio et al., 2012):
///   v' <- momentum * v + lr * g;   w <- w - ((1 + momentum) * v' - momentum * v)
/// History: v.
class NesterovSolver : public RuleSolver<NesterovRule> {
 public:
  explicit NesterovSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "Nesterov"; }
};

}  // namespace demi

#endif  // DEMI_SOLVERS_NESTEROV_HPP_
