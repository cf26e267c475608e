#ifndef DEMI_SOLVERS_SGD_HPP_
#define DEMI_SOLVERS_SGD_HPP_

#include "demi/solver.hpp"

namespace demi {

/// @brief Stochastic gradient descent with momentum, as in Caffe:
///   v <- momentum * v + lr * g;   w <- w - v
/// with g the regularized gradient and lr the rate times the param's
/// lr_mult. History: v.
class SGDSolver : public Solver {
 public:
  explicit SGDSolver(const SolverParameter& param, const Context& context = Context());
  const char* type() const override { return "SGD"; }

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

#endif  // DEMI_SOLVERS_SGD_HPP_
