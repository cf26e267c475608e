#include "demi/layers/absval_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

void AbsValLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  in_place_ = bottom[0] == top[0];
  if (in_place_) RegisterBuffer("bottom_copy", &bottom_copy_, BufferLifetime::kSavedForBackward);
}

void AbsValLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  NeuronLayer::Reshape(bottom, top);
  if (in_place_) bottom_copy_.ReshapeLike(*bottom[0]);
}

void AbsValLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t count = bottom[0]->count();
  if (in_place_ && runs_backward())
    Copy(count, bottom[0]->cpu_data(), bottom_copy_.mutable_cpu_data());
  Abs(count, bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
}

void AbsValLayer::Backward_cpu(const std::vector<Blob*>& top,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const float* x = in_place_ ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  ParallelFor(top[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      dx[i] = x[i] > 0 ? dy[i] : (x[i] < 0 ? -dy[i] : 0.0f);
    }
  });
}

DEMI_REGISTER_LAYER(AbsVal);

}  // namespace demi
