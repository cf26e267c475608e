#include "demi/solvers/adam.hpp"

#include <cmath>

#include "demi/solver_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

AdamSolver::AdamSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 2) {
  DEMI_CHECK(param_.momentum() >= 0 && param_.momentum() < 1,
             "Adam needs momentum (beta1) in [0, 1), got ", param_.momentum());
  DEMI_CHECK(param_.momentum2() >= 0 && param_.momentum2() < 1,
             "Adam needs momentum2 (beta2) in [0, 1), got ", param_.momentum2());
}

void AdamSolver::ComputeUpdateValue(int param_id, float rate) {
  Blob& param = learnable_param(param_id);
  const float beta1 = param_.momentum();
  const float beta2 = param_.momentum2();
  const float eps = param_.delta();
  const double t = iter() + 1.0;
  const float correction =
      static_cast<float>(std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t)));
  const float step_rate = LocalRate(param_id, rate) * correction;
  float* m = history(0, param_id).mutable_cpu_data();
  float* v = history(1, param_id).mutable_cpu_data();
  float* diff = param.mutable_cpu_diff();
  // Element-wise: threads take contiguous blocks.
  ParallelFor(param.count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      m[i] = beta1 * m[i] + (1 - beta1) * diff[i];
      v[i] = beta2 * v[i] + (1 - beta2) * diff[i] * diff[i];
      diff[i] = step_rate * m[i] / (std::sqrt(v[i]) + eps);
    }
  });
}

DEMI_REGISTER_SOLVER(Adam);

}  // namespace demi
