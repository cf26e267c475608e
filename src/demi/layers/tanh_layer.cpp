#include "demi/layers/tanh_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void TanHLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  Tanh(bottom[0]->count(), bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
}

void TanHLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  TanhGradient(top[0]->count(), top[0]->cpu_data(), top[0]->cpu_diff(),
               bottom[0]->mutable_cpu_diff());
}

DEMI_REGISTER_LAYER(TanH);

}  // namespace demi
