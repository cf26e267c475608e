#ifndef DEMI_SOLVERS_ADAM_HPP_
#define DEMI_SOLVERS_ADAM_HPP_

#include "demi/solver.hpp"

namespace demi {

/// @brief Adam (Kingma and Ba, 2014) with Caffe's bias correction, beta1 =
/// momentum, beta2 = momentum2, eps = delta, t = iteration + 1:
///   m <- beta1 * m + (1 - beta1) * g;   v <- beta2 * v + (1 - beta2) * g^2
///   w <- w - lr * sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps)
/// History: m (set 0) and v (set 1). beta1 and beta2 in [0, 1).
class AdamSolver : public Solver {
 public:
  explicit AdamSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "Adam"; }

 protected:
  void ComputeUpdateValue(const UpdateRow& row, int64_t begin, int64_t end,
                          const UpdateBlocks& blocks,
                          const UpdateConstants& constants) const override;
#ifndef CPU_ONLY
  void ComputeUpdateValue_gpu(const UpdateRow* rows, int num_rows, int64_t max_count,
                              const UpdateBlocks& blocks,
                              const UpdateConstants& constants) const override;
#endif
  /// Adds the bias correction of this iteration.
  UpdateConstants Constants() const override;
};

}  // namespace demi

#endif  // DEMI_SOLVERS_ADAM_HPP_
