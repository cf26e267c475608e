#include "demi/layers/threshold_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/elementwise.hpp"

namespace demi {

void ThresholdLayer::ForwardOnDevice(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  MapForward(context_.device, *bottom[0], top[0],
             ThresholdForward{layer_param_.threshold_param().threshold()});
}

void ThresholdLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 0, "its bottom: the layer is not differentiable");
}

DEMI_REGISTER_LAYER(Threshold);

}  // namespace demi
