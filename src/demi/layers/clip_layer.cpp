#include "demi/layers/clip_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

void ClipLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ClipParameter& param = layer_param_.clip_param();
  min_ = param.min();
  max_ = param.max();
  DEMI_CHECK(param.has_min() && param.has_max() && min_ < max_, "Clip layer '", layer_param_.name(),
             "' needs clip_param { min max } with min < max, got min ", min_,
             (param.has_min() ? "" : " (unset)"), " and max ", max_,
             (param.has_max() ? "" : " (unset)"));
}

DEMI_REGISTER_LAYER(Clip);

}  // namespace demi
