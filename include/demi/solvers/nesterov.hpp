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

#endif  // DEMI_SOLVERS_NESTEROV_HPP_
