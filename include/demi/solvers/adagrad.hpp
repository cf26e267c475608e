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
  void ComputeUpdateValue(const UpdateRow& row, int64_t begin, int64_t end,
                          const UpdateBlocks& blocks,
                          const UpdateConstants& constants) const override;
#ifndef CPU_ONLY
  void ComputeUpdateValue_gpu(const UpdateRow* rows, int num_rows, int64_t max_count,
                              const UpdateBlocks& blocks,
                              const UpdateConstants& constants) const override;
#endif
};

}  // namespace demi

#endif  // DEMI_SOLVERS_ADAGRAD_HPP_
