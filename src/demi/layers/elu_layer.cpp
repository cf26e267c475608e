#include "demi/layers/elu_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"

namespace demi {

void ELULayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  alpha_ = layer_param_.elu_param().alpha();
  DEMI_CHECK(alpha_ >= 0, "ELU layer '", layer_param_.name(),
             "' needs a non-negative elu_param.alpha, got ", alpha_);
}

void ELULayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  for (int64_t i = 0; i < bottom[0]->count(); ++i) {
    y[i] = x[i] > 0 ? x[i] : alpha_ * std::expm1(x[i]);
  }
}

void ELULayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const float* y = top[0]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  for (int64_t i = 0; i < top[0]->count(); ++i) {
    dx[i] = y[i] > 0 ? dy[i] : dy[i] * (y[i] + alpha_);
  }
}

DEMI_REGISTER_LAYER(ELU);

}  // namespace demi
