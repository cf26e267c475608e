#ifndef DEMI_SOLVERS_ADAGRAD_HPP_
#define DEMI_SOLVERS_ADAGRAD_HPP_

#include "demi/solver.hpp"

namespace demi {

/// @brief AdaGrad (Duchi et al., 2011):
///   h <- h + g^2;   w <- w - lr * g / (sqrt(h) + delta)
/// History: h. momentum must be 0.
class AdaGradSolver : public Solver {
 public:
  explicit AdaGradSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "AdaGrad"; }

 protected:
  void ComputeUpdateValue(int param_id, float rate) override;
};

}  // namespace demi

#endif  // DEMI_SOLVERS_ADAGRAD_HPP_
