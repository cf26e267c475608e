#include "demi/layers/threshold_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

void ThresholdLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float threshold = layer_param_.threshold_param().threshold();
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  for (int64_t i = 0; i < bottom[0]->count(); ++i) y[i] = x[i] > threshold ? 1.0f : 0.0f;
}

void ThresholdLayer::Backward_cpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  DEMI_CHECK(!propagate_down[0], "Threshold layer '", layer_param_.name(),
             "' is not differentiable and cannot backpropagate to its bottom");
}

DEMI_REGISTER_LAYER(Threshold);

}  // namespace demi
