#include "demi/layers/power_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/elementwise.hpp"

namespace demi {

bool PowerLayer::ReadsInput() const {
  const PowerParameter& param = layer_param_.power_param();
  return param.power() != 1.0f && param.power() * param.scale() != 0.0f;
}

void PowerLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const PowerParameter& param = layer_param_.power_param();
  SaveInput(*bottom[0]);
  MapForward(context_.device, *bottom[0], top[0],
             PowerForward{param.power(), param.scale(), param.shift()});
}

void PowerLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const PowerParameter& param = layer_param_.power_param();
  if (!ReadsInput()) {
    MapGradient(context_.device, *top[0], bottom[0],
                PowerConstantBackward{param.power() * param.scale()});
    return;
  }
  MapBackward(context_.device, Input(*bottom[0]), *top[0], bottom[0],
              PowerBackward{param.power(), param.scale(), param.shift()});
}

DEMI_REGISTER_LAYER(Power);

}  // namespace demi
