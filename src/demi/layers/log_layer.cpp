#include "demi/layers/log_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void LogLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float base = layer_param_.log_param().base();
  DEMI_CHECK(base == -1.0f || (base > 0.0f && base != 1.0f), "Log layer '", layer_param_.name(),
             "' needs log_param.base > 0 and != 1 (or -1 for e), got ", base);
  log_base_ = base == -1.0f ? 1.0 : std::log(double(base));
}

void LogLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const LogParameter& param = layer_param_.log_param();
  const float scale = param.scale();
  const float shift = param.shift();
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  ParallelFor(bottom[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      y[i] = static_cast<float>(std::log(double(shift + scale * x[i])) / log_base_);
    }
  });
}

void LogLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const double factor = layer_param_.log_param().scale() / log_base_;
  const float* y = top[0]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  // 1 / (shift + scale x) = base^-y = exp(-y ln(base)).
  ParallelFor(top[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      dx[i] = static_cast<float>(dy[i] * factor * std::exp(-y[i] * log_base_));
    }
  });
}

DEMI_REGISTER_LAYER(Log);

}  // namespace demi
