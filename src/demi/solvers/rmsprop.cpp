#include "demi/solvers/rmsprop.hpp"

#include "demi/solver_registry.hpp"

namespace demi {

RMSPropSolver::RMSPropSolver(const SolverParameter& param, const Context& context)
    : RuleSolver(param, context) {
  CheckNoMomentum(" and set rms_decay instead");
  CheckDecayRate("rms_decay", param_.rms_decay());
}

DEMI_REGISTER_SOLVER(RMSProp);

}  // namespace demi
