#include "demi/layers/absval_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/elementwise.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void AbsValLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Device device = context_.device;
  const int64_t count = bottom[0]->count();
  SaveInput(*bottom[0]);
  Abs(device, count, bottom[0]->data_on(device), top[0]->mutable_data_on(device));
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
