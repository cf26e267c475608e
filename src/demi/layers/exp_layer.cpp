#include "demi/layers/exp_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"

namespace demi {

void ExpLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ExpParameter& param = layer_param_.exp_param();
  const float base = param.base();
  DEMI_CHECK(base == -1.0f || base > 0.0f, "Exp layer '", layer_param_.name(),
             "' needs exp_param.base > 0 (or -1 for e), got ", base);
  const double log_base = base == -1.0f ? 1.0 : std::log(double(base));
  inner_scale_ = static_cast<float>(log_base * param.scale());
  outer_scale_ = static_cast<float>(std::exp(log_base * param.shift()));
}

DEMI_REGISTER_LAYER(Exp);

}  // namespace demi
