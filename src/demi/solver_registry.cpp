#include "demi/solver_registry.hpp"

namespace demi {

TypeRegistry<SolverRegistry::Creator>& SolverRegistry::Table() {
  static TypeRegistry<Creator> table("solver");
  return table;
}

void SolverRegistry::CheckType(const std::string& type, const std::string& source) {
  Table().Get(type, [&] { return StrCat(source, ": unknown solver type '", type, "'"); });
}

std::unique_ptr<Solver> SolverRegistry::Create(const SolverParameter& param,
                                               const Context& context) {
  SolverParameter upgraded(param);
  UpgradeSolverAsNeeded("solver parameters", &upgraded);
  const Creator& create = Table().Get(
      upgraded.type(), [&] { return StrCat("unknown solver type '", upgraded.type(), "'"); });
  return create(upgraded, context);
}

}  // namespace demi
