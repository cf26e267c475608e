#include "demi/layers/threshold_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void ThresholdLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float threshold = layer_param_.threshold_param().threshold();
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  ParallelFor(bottom[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] > threshold ? 1.0f : 0.0f;
  });
}

void ThresholdLayer::Backward_cpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 0, "its bottom: the layer is not differentiable");
}

DEMI_REGISTER_LAYER(Threshold);

}  // namespace demi
