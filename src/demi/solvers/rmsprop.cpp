#include "demi/solvers/rmsprop.hpp"

#include <cmath>

#include "demi/solver_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

RMSPropSolver::RMSPropSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 1) {
  DEMI_CHECK(param_.momentum() == 0, "the RMSProp solver has no momentum; remove momentum (got ",
             param_.momentum(), ") and set rms_decay instead");
  DEMI_CHECK(param_.rms_decay() >= 0 && param_.rms_decay() < 1,
             "RMSProp needs rms_decay in [0, 1), got ", param_.rms_decay());
}

void RMSPropSolver::ComputeUpdateValue(int param_id, float rate) {
  Blob& param = learnable_param(param_id);
  const float local_rate = LocalRate(param_id, rate);
  const float decay = param_.rms_decay();
  const float delta = param_.delta();
  float* mean_sq = history(0, param_id).mutable_cpu_data();
  float* diff = param.mutable_cpu_diff();
  // Element-wise: threads take contiguous blocks.
  ParallelFor(param.count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      mean_sq[i] = decay * mean_sq[i] + (1 - decay) * diff[i] * diff[i];
      diff[i] = local_rate * diff[i] / (std::sqrt(mean_sq[i]) + delta);
    }
  });
}

DEMI_REGISTER_SOLVER(RMSProp);

}  // namespace demi
