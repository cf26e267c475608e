#include "demi/layers/log_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"

namespace demi {

void LogLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float base = layer_param_.log_param().base();
  DEMI_CHECK(base == -1.0f || (base > 0.0f && base != 1.0f), "Log layer '", layer_param_.name(),
             "' needs log_param.base > 0 and != 1 (or -1 for e), got ", base);
  log_base_ = base == -1.0f ? 1.0 : std::log(double(base));
}

LogForward LogLayer::forward_formula(Type) const {
  const LogParameter& param = layer_param_.log_param();
  return {param.scale(), param.shift(), log_base_};
}

LogBackward LogLayer::backward_formula(Type) const {
  return {layer_param_.log_param().scale() / log_base_, log_base_};
}

DEMI_REGISTER_LAYER(Log);

}  // namespace demi
