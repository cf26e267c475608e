#include "demi/solvers/nesterov.hpp"

#include "demi/solver_registry.hpp"

namespace demi {

NesterovSolver::NesterovSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 1) {}

void NesterovSolver::ComputeUpdateValue(const UpdateRow& row, int64_t begin, int64_t end,
                                        const UpdateBlocks& blocks,
                                        const UpdateConstants& constants) const {
  const float rate = row.rate;
  const float momentum = constants.momentum;
  float* velocity = blocks.history[0];
  float* diff = blocks.diff;
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const float previous = velocity[i];
    velocity[i] = momentum * velocity[i] + rate * diff[i];
    diff[i] = (1 + momentum) * velocity[i] - momentum * previous;
  }
}

#ifndef CPU_ONLY
void NesterovSolver::ComputeUpdateValue_gpu(const UpdateRow* rows, int num_rows, int64_t max_count,
                                            const UpdateBlocks& blocks,
                                            const UpdateConstants& constants) const {
  GpuNesterovUpdate(rows, num_rows, max_count, blocks, constants);
}
#endif

DEMI_REGISTER_SOLVER(Nesterov);

}  // namespace demi
