#include "demi/layer_registry.hpp"

namespace demi {

TypeRegistry<LayerRegistry::Creator>& LayerRegistry::Table() {
  static TypeRegistry<Creator> table("layer");
  return table;
}

namespace {

/// Why a "Python" layer is unknown: the build has no Python layers, or this
/// program does not embed the interpreter (they are registered by the Python
/// bindings, python/src/python_layer.cpp, which the tools and the Python
/// module link).
std::string NoPythonLayers(const LayerParameter& param) {
#ifdef WITH_PYTHON_LAYER
  return StrCat("layer '", param.name(), "' has type 'Python', but this program does not embed ",
                "Python; run the net from the tools (train, test, time) or from Python ",
                "(demitasse.Net)");
#else
  return StrCat("layer '", param.name(), "' has type 'Python', but this build lacks Python ",
                "layers; rebuild with WITH_PYTHON_LAYER=1 (needs python3-dev and pybind11-dev; ",
                "it is off under SANITIZE)");
#endif
}

}  // namespace

std::unique_ptr<Layer> LayerRegistry::Create(const LayerParameter& param) {
  if (param.type() == "Python" && !Table().Has("Python")) ThrowError(NoPythonLayers(param));
  const Creator& create = Table().Get(param.type(), [&] {
    return StrCat("layer '", param.name(), "' has unknown type '", param.type(), "'");
  });
  return create(param);
}

}  // namespace demi
