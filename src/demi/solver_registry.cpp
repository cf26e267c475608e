#include "demi/solver_registry.hpp"

#include <map>

namespace demi {

namespace {

std::map<std::string, SolverRegistry::Creator>& Registry() {
  static std::map<std::string, SolverRegistry::Creator> registry;
  return registry;
}

}  // namespace

void SolverRegistry::Add(const std::string& type, Creator creator) {
  CHECK(Registry().count(type) == 0) << "solver type " << type << " registered twice";
  Registry()[type] = std::move(creator);
}

std::unique_ptr<Solver> SolverRegistry::Create(const SolverParameter& param,
                                               const Context& context) {
  SolverParameter upgraded(param);
  UpgradeSolverAsNeeded("solver parameters", &upgraded);
  auto it = Registry().find(upgraded.type());
  if (it == Registry().end()) {
    std::string known;
    for (const std::string& type : Types()) known += (known.empty() ? "" : ", ") + type;
    ThrowError(StrCat("unknown solver type '", upgraded.type(), "'; known types: ", known));
  }
  return it->second(upgraded, context);
}

std::vector<std::string> SolverRegistry::Types() {
  std::vector<std::string> types;
  for (const auto& entry : Registry()) types.push_back(entry.first);
  return types;
}

}  // namespace demi
