#include "demi/layer_registry.hpp"

namespace demi {

TypeRegistry<LayerRegistry::Creator>& LayerRegistry::Table() {
  static TypeRegistry<Creator> table("layer");
  return table;
}

std::unique_ptr<Layer> LayerRegistry::Create(const LayerParameter& param) {
  const Creator& create = Table().Get(param.type(), [&] {
    return StrCat("layer '", param.name(), "' has unknown type '", param.type(), "'");
  });
  return create(param);
}

}  // namespace demi
