#ifndef DEMI_SOLVERS_RMSPROP_HPP_
#define DEMI_SOLVERS_RMSPROP_HPP_

#include "demi/solver.hpp"

namespace demi {

/// @brief RMSProp (Tieleman and Hinton, 2012):
///   h <- rms_decay * h + (1 - rms_decay) * g^2;   w <- w - lr * g / (sqrt(h) + delta)
/// History: h. momentum must be 0; rms_decay in [0, 1).
class RMSPropSolver : public Solver {
 public:
  explicit RMSPropSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "RMSProp"; }

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

#endif  // DEMI_SOLVERS_RMSPROP_HPP_
