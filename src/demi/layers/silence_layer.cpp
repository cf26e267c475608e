#include "demi/layers/silence_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void SilenceLayer::Backward_cpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (propagate_down[i]) Set(bottom[i]->count(), 0.0f, bottom[i]->mutable_cpu_diff());
  }
}

DEMI_REGISTER_LAYER(Silence);

}  // namespace demi
