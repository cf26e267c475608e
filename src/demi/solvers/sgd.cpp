#include "demi/solvers/sgd.hpp"

#include "demi/solver_registry.hpp"

namespace demi {

SGDSolver::SGDSolver(const SolverParameter& param, const Context& context)
    : RuleSolver(param, context) {}

DEMI_REGISTER_SOLVER(SGD);

}  // namespace demi
