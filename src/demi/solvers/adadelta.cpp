#include "demi/solvers/adadelta.hpp"

#include <cmath>

#include "demi/solver_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

AdaDeltaSolver::AdaDeltaSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 2) {
  DEMI_CHECK(param_.momentum() >= 0 && param_.momentum() < 1,
             "AdaDelta needs momentum (its decay rate) in [0, 1), got ", param_.momentum());
}

void AdaDeltaSolver::ComputeUpdateValue(int param_id, float rate) {
  Blob& param = learnable_param(param_id);
  const float local_rate = LocalRate(param_id, rate);
  const float rho = param_.momentum();
  const float delta = param_.delta();
  float* grad_sq = history(0, param_id).mutable_cpu_data();
  float* step_sq = history(1, param_id).mutable_cpu_data();
  float* diff = param.mutable_cpu_diff();
  // Element-wise: threads take contiguous blocks.
  ParallelFor(param.count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      grad_sq[i] = rho * grad_sq[i] + (1 - rho) * diff[i] * diff[i];
      const float step = diff[i] * std::sqrt((step_sq[i] + delta) / (grad_sq[i] + delta));
      step_sq[i] = rho * step_sq[i] + (1 - rho) * step * step;
      diff[i] = local_rate * step;
    }
  });
}

DEMI_REGISTER_SOLVER(AdaDelta);

}  // namespace demi
