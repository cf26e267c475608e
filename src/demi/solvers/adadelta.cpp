#include "demi/solvers/adadelta.hpp"

#include <cmath>

#include "demi/solver_registry.hpp"

namespace demi {

AdaDeltaSolver::AdaDeltaSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 2) {
  DEMI_CHECK(param_.momentum() >= 0 && param_.momentum() < 1,
             "AdaDelta needs momentum (its decay rate) in [0, 1), got ", param_.momentum());
}

void AdaDeltaSolver::ComputeUpdateValue(const UpdateRow& row, int64_t begin, int64_t end,
                                        const UpdateBlocks& blocks,
                                        const UpdateConstants& constants) const {
  const float rate = row.rate;
  const float rho = constants.momentum;
  const float delta = constants.delta;
  float* grad_sq = blocks.history[0];
  float* step_sq = blocks.history[1];
  float* diff = blocks.diff;
  for (int64_t i = begin; i < end; ++i) {
    grad_sq[i] = rho * grad_sq[i] + (1 - rho) * diff[i] * diff[i];
    const float step = diff[i] * std::sqrt((step_sq[i] + delta) / (grad_sq[i] + delta));
    step_sq[i] = rho * step_sq[i] + (1 - rho) * step * step;
    diff[i] = rate * step;
  }
}

#ifndef CPU_ONLY
void AdaDeltaSolver::ComputeUpdateValue_gpu(const UpdateRow* rows, int num_rows, int64_t max_count,
                                            const UpdateBlocks& blocks,
                                            const UpdateConstants& constants) const {
  GpuAdaDeltaUpdate(rows, num_rows, max_count, blocks, constants);
}
#endif

DEMI_REGISTER_SOLVER(AdaDelta);

}  // namespace demi
