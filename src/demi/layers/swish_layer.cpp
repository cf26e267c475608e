#include "demi/layers/swish_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/elementwise.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void SwishLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Device device = context_.device;
  SaveInput(*bottom[0]);
  MapForward(device, *bottom[0], top[0], SwishForward{layer_param_.swish_param().beta()});
}

void SwishLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const Blob& x = Input(*bottom[0]);
  MapBackward(context_.device, x, *top[0], bottom[0],
              SwishBackward{layer_param_.swish_param().beta()});
}

DEMI_REGISTER_LAYER(Swish);

}  // namespace demi
