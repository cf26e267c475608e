#include "demi/layers/silence_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void SilenceLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob*>& bottom) {
  const Device device = context_.device;
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (propagate_down[i])
      Set(device, bottom[i]->count(), 0.0f, bottom[i]->mutable_diff_on(device));
  }
}

DEMI_REGISTER_LAYER(Silence);

}  // namespace demi
