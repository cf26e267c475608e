#include "demi/layers/swish_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {
namespace {

/// 1 / (1 + exp(-z)) through tanh, which never overflows.
float Sigmoid(float z) { return 0.5f * std::tanh(0.5f * z) + 0.5f; }

}  // namespace

void SwishLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  in_place_ = bottom[0] == top[0];
  if (in_place_) RegisterBuffer("bottom_copy", &bottom_copy_, BufferLifetime::kSavedForBackward);
}

void SwishLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  NeuronLayer::Reshape(bottom, top);
  if (in_place_) bottom_copy_.ReshapeLike(*bottom[0]);
}

void SwishLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float beta = layer_param_.swish_param().beta();
  const int64_t count = bottom[0]->count();
  const float* x = bottom[0]->cpu_data();
  if (in_place_ && runs_backward()) Copy(count, x, bottom_copy_.mutable_cpu_data());
  float* y = top[0]->mutable_cpu_data();
  ParallelFor(count, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = x[i] * Sigmoid(beta * x[i]);
  });
}

void SwishLayer::Backward_cpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const float beta = layer_param_.swish_param().beta();
  const float* x = in_place_ ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  ParallelFor(top[0]->count(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float s = Sigmoid(beta * x[i]);
      dx[i] = dy[i] * (s + beta * x[i] * s * (1.0f - s));
    }
  });
}

DEMI_REGISTER_LAYER(Swish);

}  // namespace demi
