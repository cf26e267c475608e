#include "demi/solvers/adam.hpp"

#include <cmath>

#include "demi/solver_registry.hpp"

namespace demi {

AdamSolver::AdamSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 2) {
  DEMI_CHECK(param_.momentum() >= 0 && param_.momentum() < 1,
             "Adam needs momentum (beta1) in [0, 1), got ", param_.momentum());
  DEMI_CHECK(param_.momentum2() >= 0 && param_.momentum2() < 1,
             "Adam needs momentum2 (beta2) in [0, 1), got ", param_.momentum2());
}

void AdamSolver::ComputeUpdateValue(const UpdateRow& row, int64_t begin, int64_t end,
                                    const UpdateBlocks& blocks,
                                    const UpdateConstants& constants) const {
  const float beta1 = constants.momentum;
  const float beta2 = constants.momentum2;
  const float eps = constants.delta;
  const float step_rate = row.rate * constants.correction;
  float* m = blocks.history[0];
  float* v = blocks.history[1];
  float* diff = blocks.diff;
  for (int64_t i = begin; i < end; ++i) {
    m[i] = beta1 * m[i] + (1 - beta1) * diff[i];
    v[i] = beta2 * v[i] + (1 - beta2) * diff[i] * diff[i];
    diff[i] = step_rate * m[i] / (std::sqrt(v[i]) + eps);
  }
}

UpdateConstants AdamSolver::Constants() const {
  UpdateConstants constants = Solver::Constants();
  const double t = iter() + 1.0;
  constants.correction = static_cast<float>(std::sqrt(1.0 - std::pow(param_.momentum2(), t)) /
                                            (1.0 - std::pow(param_.momentum(), t)));
  return constants;
}

#ifndef CPU_ONLY
void AdamSolver::ComputeUpdateValue_gpu(const UpdateRow* rows, int num_rows, int64_t max_count,
                                        const UpdateBlocks& blocks,
                                        const UpdateConstants& constants) const {
  GpuAdamUpdate(rows, num_rows, max_count, blocks, constants);
}
#endif

DEMI_REGISTER_SOLVER(Adam);

}  // namespace demi
