#include "demi/layers/elu_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void ELULayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  alpha_ = layer_param_.elu_param().alpha();
  DEMI_CHECK(alpha_ >= 0, "ELU layer '", layer_param_.name(),
             "' needs a non-negative elu_param.alpha, got ", alpha_);
}

void ELULayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  ParallelFor(bottom[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      y[i] = x[i] > 0 ? x[i] : alpha_ * std::expm1(x[i]);
    }
  });
}

void ELULayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const float* y = top[0]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  ParallelFor(top[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      dx[i] = y[i] > 0 ? dy[i] : dy[i] * (y[i] + alpha_);
    }
  });
}

DEMI_REGISTER_LAYER(ELU);

}  // namespace demi
