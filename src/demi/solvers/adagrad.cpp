#include "demi/solvers/adagrad.hpp"

#include <cmath>

#include "demi/solver_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

AdaGradSolver::AdaGradSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 1) {
  DEMI_CHECK(param_.momentum() == 0, "the AdaGrad solver has no momentum; remove momentum (got ",
             param_.momentum(), ")");
}

void AdaGradSolver::ComputeUpdateValue(int param_id, float rate) {
  Blob& param = learnable_param(param_id);
  const float local_rate = LocalRate(param_id, rate);
  const float delta = param_.delta();
  float* sum_sq = history(0, param_id).mutable_cpu_data();
  float* diff = param.mutable_cpu_diff();
  // Element-wise: threads take contiguous blocks.
  ParallelFor(param.count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      sum_sq[i] += diff[i] * diff[i];
      diff[i] = local_rate * diff[i] / (std::sqrt(sum_sq[i]) + delta);
    }
  });
}

DEMI_REGISTER_SOLVER(AdaGrad);

}  // namespace demi
