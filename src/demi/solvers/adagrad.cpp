#include "demi/solvers/adagrad.hpp"

#include <cmath>

#include "demi/solver_registry.hpp"

namespace demi {

AdaGradSolver::AdaGradSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 1) {
  DEMI_CHECK(param_.momentum() == 0, "the AdaGrad solver has no momentum; remove momentum (got ",
             param_.momentum(), ")");
}

void AdaGradSolver::ComputeUpdateValue(const UpdateRow& row, int64_t begin, int64_t end,
                                       const UpdateBlocks& blocks,
                                       const UpdateConstants& constants) const {
  const float rate = row.rate;
  const float delta = constants.delta;
  float* sum_sq = blocks.history[0];
  float* diff = blocks.diff;
  for (int64_t i = begin; i < end; ++i) {
    sum_sq[i] += diff[i] * diff[i];
    diff[i] = rate * diff[i] / (std::sqrt(sum_sq[i]) + delta);
  }
}

#ifndef CPU_ONLY
void AdaGradSolver::ComputeUpdateValue_gpu(const UpdateRow* rows, int num_rows, int64_t max_count,
                                           const UpdateBlocks& blocks,
                                           const UpdateConstants& constants) const {
  GpuAdaGradUpdate(rows, num_rows, max_count, blocks, constants);
}
#endif

DEMI_REGISTER_SOLVER(AdaGrad);

}  // namespace demi
