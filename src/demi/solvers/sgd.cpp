#include "demi/solvers/sgd.hpp"

#include "demi/solver_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

SGDSolver::SGDSolver(const SolverParameter& param, const Context& context)
    : Solver(param, context, 1) {}

void SGDSolver::ComputeUpdateValue(int param_id, float rate) {
  Blob& param = learnable_param(param_id);
  Blob& velocity = history(0, param_id);
  Axpby(param.count(), LocalRate(param_id, rate), param.cpu_diff(), param_.momentum(),
        velocity.mutable_cpu_data());
  Copy(param.count(), velocity.cpu_data(), param.mutable_cpu_diff());
}

DEMI_REGISTER_SOLVER(SGD);

}  // namespace demi
