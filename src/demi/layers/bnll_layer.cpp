#include "demi/layers/bnll_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void BNLLLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  ParallelFor(bottom[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      y[i] = x[i] > 0 ? x[i] + std::log1p(std::exp(-x[i])) : std::log1p(std::exp(x[i]));
    }
  });
}

void BNLLLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const float* y = top[0]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  ParallelFor(top[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dx[i] = -std::expm1(-y[i]) * dy[i];
  });
}

DEMI_REGISTER_LAYER(BNLL);

}  // namespace demi
