#ifndef DEMI_SOLVERS_NESTEROV_HPP_
#define DEMI_SOLVERS_NESTEROV_HPP_

#include "demi/solver.hpp"

namespace demi {

/// @brief Nesterov's accelerated gradient in Caffe's form (Sutskever et al.,
/// 2013; Bengio et al., 2012):
///   v' <- momentum * v + lr * g;   w <- w - ((1 + momentum) * v' - momentum * v)
/// History: v.
class NesterovSolver : public Solver {
 public:
  explicit NesterovSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "Nesterov"; }

 protected:
  void ComputeUpdateValue(int param_id, float rate) override;
};

}  // namespace demi

#endif  // DEMI_SOLVERS_NESTEROV_HPP_
