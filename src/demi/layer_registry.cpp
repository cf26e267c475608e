#include "demi/layer_registry.hpp"

#include <map>

namespace demi {

namespace {

std::map<std::string, LayerRegistry::Creator>& Registry() {
  static std::map<std::string, LayerRegistry::Creator> registry;
  return registry;
}

}  // namespace

void LayerRegistry::Add(const std::string& type, Creator creator) {
  CHECK(Registry().count(type) == 0) << "layer type " << type << " registered twice";
  Registry()[type] = std::move(creator);
}

std::unique_ptr<Layer> LayerRegistry::Create(const LayerParameter& param) {
  auto it = Registry().find(param.type());
  if (it == Registry().end()) {
    std::string known;
    for (const std::string& type : Types()) known += (known.empty() ? "" : ", ") + type;
    ThrowError(StrCat("layer '", param.name(), "' has unknown type '", param.type(),
                      "'; known types: ", known));
  }
  return it->second(param);
}

std::vector<std::string> LayerRegistry::Types() {
  std::vector<std::string> types;
  for (const auto& entry : Registry()) types.push_back(entry.first);
  return types;
}

bool LayerRegistry::Has(const std::string& type) { return Registry().count(type) > 0; }

}  // namespace demi
