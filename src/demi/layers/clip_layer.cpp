#include "demi/layers/clip_layer.hpp"

#include <algorithm>

#include "demi/layer_registry.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void ClipLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ClipParameter& param = layer_param_.clip_param();
  min_ = param.min();
  max_ = param.max();
  DEMI_CHECK(param.has_min() && param.has_max() && min_ < max_, "Clip layer '", layer_param_.name(),
             "' needs clip_param { min max } with min < max, got min ", min_,
             (param.has_min() ? "" : " (unset)"), " and max ", max_,
             (param.has_max() ? "" : " (unset)"));
}

void ClipLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  ParallelFor(bottom[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = std::min(std::max(x[i], min_), max_);
  });
}

void ClipLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const float* y = top[0]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  ParallelFor(top[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dx[i] = y[i] > min_ && y[i] < max_ ? dy[i] : 0.0f;
  });
}

DEMI_REGISTER_LAYER(Clip);

}  // namespace demi
