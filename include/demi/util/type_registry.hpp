#ifndef DEMI_UTIL_TYPE_REGISTRY_HPP_
#define DEMI_UTIL_TYPE_REGISTRY_HPP_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "demi/common.hpp"

namespace demi {

/// @brief Type strings mapped to factories: the table behind LayerRegistry
/// and SolverRegistry. Filled by static registration, so each registry keeps
/// its table in a function-local static, ready whichever file registers
/// first.
template <typename Creator>
class TypeRegistry {
 public:
  /// `kind` names what the factories make ("layer"), for the errors.
  explicit TypeRegistry(std::string kind) : kind_(std::move(kind)) {}
  TypeRegistry(const TypeRegistry&) = delete;
  TypeRegistry& operator=(const TypeRegistry&) = delete;

  void Add(const std::string& type, Creator creator) {
    CHECK(creators_.count(type) == 0) << kind_ << " type " << type << " registered twice";
    creators_[type] = std::move(creator);
  }
  bool Has(const std::string& type) const { return creators_.count(type) > 0; }
  /// The factory of `type`; an unknown type throws an Error: `unknown()`
  /// (what was asked for), then the known types.
  template <typename Message>
  const Creator& Get(const std::string& type, const Message& unknown) const {
    const auto it = creators_.find(type);
    if (it == creators_.end()) ThrowError(StrCat(unknown(), "; known types: ", KnownTypes()));
    return it->second;
  }
  /// The registered types in order.
  std::vector<std::string> Types() const {
    std::vector<std::string> types;
    for (const auto& entry : creators_) types.push_back(entry.first);
    return types;
  }

 private:
  /// "a, b, c": the registered types.
  std::string KnownTypes() const {
    std::string known;
    for (const auto& entry : creators_) known += (known.empty() ? "" : ", ") + entry.first;
    return known;
  }

  std::string kind_;
  std::map<std::string, Creator> creators_;
};

}  // namespace demi

#endif  // DEMI_UTIL_TYPE_REGISTRY_HPP_
