#include "demi/layers/absval_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/elementwise.hpp"

namespace demi {

void AbsValLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  SaveInput(*bottom[0]);
  MapForward(context_.device, *bottom[0], top[0], AbsValForward{});
}

void AbsValLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const Blob& x = Input(*bottom[0]);
  MapBackward(context_.device, x, *top[0], bottom[0], AbsValBackward{});
}

DEMI_REGISTER_LAYER(AbsVal);

}  // namespace demi
