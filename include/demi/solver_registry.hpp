#ifndef DEMI_SOLVER_REGISTRY_HPP_
#define DEMI_SOLVER_REGISTRY_HPP_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "demi/solver.hpp"
#include "demi/util/type_registry.hpp"

namespace demi {

/// @brief Maps a solver type string ("SGD", "Adam", ...) to a factory.
/// Solvers register themselves with DEMI_REGISTER_SOLVER in their source.
class SolverRegistry {
 public:
  using Creator = std::function<std::unique_ptr<Solver>(const SolverParameter&, const Context&)>;

  static void Add(const std::string& type, Creator creator) {
    Table().Add(type, std::move(creator));
  }
  /// Creates the solver for `param` (its `type`, or its legacy solver_type);
  /// an unknown type throws an Error listing the known ones.
  static std::unique_ptr<Solver> Create(const SolverParameter& param,
                                        const Context& context = Context());
  static std::vector<std::string> Types() { return Table().Types(); }
  /// Throws Create's error for an unknown `type`, beginning with `source`
  /// (the solver file), before any net is built.
  static void CheckType(const std::string& type, const std::string& source);

 private:
  static TypeRegistry<Creator>& Table();
};

struct SolverRegisterer {
  SolverRegisterer(const std::string& type, SolverRegistry::Creator creator) {
    SolverRegistry::Add(type, std::move(creator));
  }
};

}  // namespace demi

/// Registers class `<type>Solver` under the type string "<type>".
#define DEMI_REGISTER_SOLVER(type)                                            \
  static ::demi::SolverRegisterer g_demi_register_solver_##type(              \
      #type,                                                                  \
      [](const ::demi::SolverParameter& param,                                \
         const ::demi::Context& context) -> std::unique_ptr<::demi::Solver> { \
        return std::make_unique<type##Solver>(param, context);                \
      })

#endif  // DEMI_SOLVER_REGISTRY_HPP_
