#include "demi/solvers/sgd.hpp"

#include "demi/solver_registry.hpp"

namespace demi {

SGDSolver::SGDSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 1) {}

void SGDSolver::ComputeUpdateValue(const UpdateRow& row, int64_t begin, int64_t end,
                                   const UpdateBlocks& blocks,
                                   const UpdateConstants& constants) const {
  const float rate = row.rate;
  const float momentum = constants.momentum;
  float* velocity = blocks.history[0];
  float* diff = blocks.diff;
  if (momentum == 0.0f) {
    // Without momentum the old velocity is never read (it could be anything).
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) velocity[i] = rate * diff[i];
  } else {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) velocity[i] = rate * diff[i] + momentum * velocity[i];
  }
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) diff[i] = velocity[i];
}

#ifndef CPU_ONLY
void SGDSolver::ComputeUpdateValue_gpu(const UpdateRow* rows, int num_rows, int64_t max_count,
                                       const UpdateBlocks& blocks,
                                       const UpdateConstants& constants) const {
  GpuSGDUpdate(rows, num_rows, max_count, blocks, constants);
}
#endif

DEMI_REGISTER_SOLVER(SGD);

}  // namespace demi
