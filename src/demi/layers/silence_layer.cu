#include "demi/layers/silence_layer.hpp"
#include "demi/util/math_gpu.hpp"

namespace demi {

// launchers

void SilenceLayer::Backward_gpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (propagate_down[i]) GpuSet(bottom[i]->count(), 0.0f, bottom[i]->mutable_gpu_diff());
  }
}

}  // namespace demi
