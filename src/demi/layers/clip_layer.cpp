#include "demi/layers/clip_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

namespace {

/// `value` as a blob stored in `type` holds it.
float StoredValue(float value, Type type) {
  return VisitStorageType(type,
                          [value](auto tag) { return static_cast<float>(decltype(tag)(value)); });
}

}  // namespace

void ClipLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ClipParameter& param = layer_param_.clip_param();
  min_ = param.min();
  max_ = param.max();
  DEMI_CHECK(param.has_min() && param.has_max() && min_ < max_, "Clip layer '", layer_param_.name(),
             "' needs clip_param { min max } with min < max, got min ", min_,
             (param.has_min() ? "" : " (unset)"), " and max ", max_,
             (param.has_max() ? "" : " (unset)"));
}

ClipForward ClipLayer::forward_formula(Type stored) const {
  return {StoredValue(min_, stored), StoredValue(max_, stored)};
}

ClipBackward ClipLayer::backward_formula(Type stored) const {
  return {StoredValue(min_, stored), StoredValue(max_, stored)};
}

DEMI_REGISTER_LAYER(Clip);

}  // namespace demi
