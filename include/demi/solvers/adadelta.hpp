#ifndef DEMI_SOLVERS_ADADELTA_HPP_
#define DEMI_SOLVERS_ADADELTA_HPP_

#include "demi/solver.hpp"

namespace demi {

/// @brief AdaDelta (Zeiler, 2012), with momentum as the decay rho and the
/// learning rate (usually 1) scaling the step:
///   Eg <- rho * Eg + (1 - rho) * g^2
///   d  <- g * sqrt((Ed + delta) / (Eg + delta))
///   Ed <- rho * Ed + (1 - rho) * d^2;   w <- w - lr * d
/// History: Eg (set 0) and Ed (set 1). momentum in [0, 1).
class AdaDeltaSolver : public Solver {
 public:
  explicit AdaDeltaSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "AdaDelta"; }

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

#endif  // DEMI_SOLVERS_ADADELTA_HPP_
