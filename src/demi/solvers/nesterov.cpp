#include "demi/solvers/nesterov.hpp"

#include "demi/solver_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

NesterovSolver::NesterovSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 1) {}

void NesterovSolver::ComputeUpdateValue(int param_id, float rate) {
  Blob& param = learnable_param(param_id);
  const float local_rate = LocalRate(param_id, rate);
  const float momentum = param_.momentum();
  float* velocity = history(0, param_id).mutable_cpu_data();
  float* diff = param.mutable_cpu_diff();
  // Element-wise: threads take contiguous blocks.
  ParallelFor(param.count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float previous = velocity[i];
      velocity[i] = momentum * velocity[i] + local_rate * diff[i];
      diff[i] = (1 + momentum) * velocity[i] - momentum * previous;
    }
  });
}

DEMI_REGISTER_SOLVER(Nesterov);

}  // namespace demi
