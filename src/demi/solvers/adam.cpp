#include "demi/solvers/adam.hpp"

#include <cmath>

#include "demi/solver_registry.hpp"

namespace demi {

AdamSolver::AdamSolver(const SolverParameter& param, const Context& context)
    : RuleSolver(param, context) {
  CheckDecayRate("momentum (beta1)", param_.momentum());
  CheckDecayRate("momentum2 (beta2)", param_.momentum2());
}

UpdateConstants AdamSolver::Constants() const {
  UpdateConstants constants = Solver::Constants();
  const double t = iter() + 1.0;
  constants.correction = static_cast<float>(std::sqrt(1.0 - std::pow(param_.momentum2(), t)) /
                                            (1.0 - std::pow(param_.momentum(), t)));
  return constants;
}

DEMI_REGISTER_SOLVER(Adam);

}  // namespace demi
