#ifndef DEMI_LAYER_REGISTRY_HPP_
#define DEMI_LAYER_REGISTRY_HPP_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "demi/layer.hpp"
#include "demi/util/type_registry.hpp"

namespace demi {

/// @brief Maps a layer type string ("Convolution") to a factory. Layers
/// register themselves with DEMI_REGISTER_LAYER in their source file; the
/// library is linked whole so that no registration is dropped.
class LayerRegistry {
 public:
  using Creator = std::function<std::unique_ptr<Layer>(const LayerParameter&)>;

  static void Add(const std::string& type, Creator creator) {
    Table().Add(type, std::move(creator));
  }
  /// Creates the layer for `param.type()`; an unknown type throws an Error
  /// that lists every known type.
  static std::unique_ptr<Layer> Create(const LayerParameter& param);
  static std::vector<std::string> Types() { return Table().Types(); }
  static bool Has(const std::string& type) { return Table().Has(type); }

 private:
  static TypeRegistry<Creator>& Table();
};

struct LayerRegisterer {
  LayerRegisterer(const std::string& type, LayerRegistry::Creator creator) {
    LayerRegistry::Add(type, std::move(creator));
  }
};

}  // namespace demi

/// Registers class `<type>Layer` under the type string "<type>".
#define DEMI_REGISTER_LAYER(type)                                                        \
  static ::demi::LayerRegisterer g_demi_register_##type(                                 \
      #type, [](const ::demi::LayerParameter& param) -> std::unique_ptr<::demi::Layer> { \
        return std::make_unique<type##Layer>(param);                                     \
      })

#endif  // DEMI_LAYER_REGISTRY_HPP_
