#include "demi/solvers/adagrad.hpp"

#include "demi/solver_registry.hpp"

namespace demi {

AdaGradSolver::AdaGradSolver(const SolverParameter& param, const Context& context)
    : RuleSolver(param, context) {
  CheckNoMomentum("");
}

DEMI_REGISTER_SOLVER(AdaGrad);

}  // namespace demi
