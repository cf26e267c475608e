#include "demi/solvers/nesterov.hpp"

#include "demi/solver_registry.hpp"

namespace demi {

NesterovSolver::NesterovSolver(const SolverParameter& param, const Context& context)
    : RuleSolver(param, context) {}

DEMI_REGISTER_SOLVER(Nesterov);

}  // namespace demi
