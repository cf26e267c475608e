#include "demi/layers/exp_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void ExpLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ExpParameter& param = layer_param_.exp_param();
  const float base = param.base();
  DEMI_CHECK(base == -1.0f || base > 0.0f, "Exp layer '", layer_param_.name(),
             "' needs exp_param.base > 0 (or -1 for e), got ", base);
  const double log_base = base == -1.0f ? 1.0 : std::log(double(base));
  inner_scale_ = static_cast<float>(log_base * param.scale());
  outer_scale_ = static_cast<float>(std::exp(log_base * param.shift()));
}

void ExpLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  ParallelFor(bottom[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      y[i] = outer_scale_ * std::exp(inner_scale_ * x[i]);
    }
  });
}

void ExpLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const float* y = top[0]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  ParallelFor(top[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dx[i] = dy[i] * y[i] * inner_scale_;
  });
}

DEMI_REGISTER_LAYER(Exp);

}  // namespace demi
