#include "demi/solvers/rmsprop.hpp"

#include <cmath>

#include "demi/solver_registry.hpp"

namespace demi {

RMSPropSolver::RMSPropSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 1) {
  DEMI_CHECK(param_.momentum() == 0, "the RMSProp solver has no momentum; remove momentum (got ",
             param_.momentum(), ") and set rms_decay instead");
  DEMI_CHECK(param_.rms_decay() >= 0 && param_.rms_decay() < 1,
             "RMSProp needs rms_decay in [0, 1), got ", param_.rms_decay());
}

void RMSPropSolver::ComputeUpdateValue(const UpdateRow& row, int64_t begin, int64_t end,
                                       const UpdateBlocks& blocks,
                                       const UpdateConstants& constants) const {
  const float rate = row.rate;
  const float decay = constants.decay;
  const float delta = constants.delta;
  float* mean_sq = blocks.history[0];
  float* diff = blocks.diff;
  for (int64_t i = begin; i < end; ++i) {
    mean_sq[i] = decay * mean_sq[i] + (1 - decay) * diff[i] * diff[i];
    diff[i] = rate * diff[i] / (std::sqrt(mean_sq[i]) + delta);
  }
}

#ifndef CPU_ONLY
void RMSPropSolver::ComputeUpdateValue_gpu(const UpdateRow* rows, int num_rows, int64_t max_count,
                                           const UpdateBlocks& blocks,
                                           const UpdateConstants& constants) const {
  GpuRMSPropUpdate(rows, num_rows, max_count, blocks, constants);
}
#endif

DEMI_REGISTER_SOLVER(RMSProp);

}  // namespace demi
