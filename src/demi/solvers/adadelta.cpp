#include "demi/solvers/adadelta.hpp"

#include "demi/solver_registry.hpp"

namespace demi {

AdaDeltaSolver::AdaDeltaSolver(const SolverParameter& param, const Context& context)
    : RuleSolver(param, context) {
  CheckDecayRate("momentum (its decay rate)", param_.momentum());
}

DEMI_REGISTER_SOLVER(AdaDelta);

}  // namespace demi
