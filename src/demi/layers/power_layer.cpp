#include "demi/layers/power_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

bool PowerLayer::ConstantDerivative() const {
  const PowerParameter& param = layer_param_.power_param();
  return param.power() == 1.0f || param.power() * param.scale() == 0.0f;
}

void PowerLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  in_place_ = bottom[0] == top[0];
  if (in_place_ && !ConstantDerivative()) {
    RegisterBuffer("bottom_copy", &bottom_copy_, BufferLifetime::kSavedForBackward);
  }
}

void PowerLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  NeuronLayer::Reshape(bottom, top);
  if (in_place_ && !ConstantDerivative()) bottom_copy_.ReshapeLike(*bottom[0]);
}

void PowerLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const PowerParameter& param = layer_param_.power_param();
  const float power = param.power();
  const float scale = param.scale();
  const float shift = param.shift();
  const int64_t count = bottom[0]->count();
  const float* x = bottom[0]->cpu_data();
  if (in_place_ && !ConstantDerivative() && runs_backward()) {
    Copy(count, x, bottom_copy_.mutable_cpu_data());
  }
  float* y = top[0]->mutable_cpu_data();
  ParallelFor(count, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = std::pow(shift + scale * x[i], power);
  });
}

void PowerLayer::Backward_cpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const PowerParameter& param = layer_param_.power_param();
  const float power = param.power();
  const float scale = param.scale();
  const float shift = param.shift();
  const float diff_scale = power * scale;
  const int64_t count = top[0]->count();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  if (ConstantDerivative()) {
    ParallelFor(count, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dx[i] = diff_scale * dy[i];
    });
    return;
  }
  const float* x = in_place_ ? bottom_copy_.cpu_data() : bottom[0]->cpu_data();
  ParallelFor(count, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      dx[i] = dy[i] * diff_scale * std::pow(shift + scale * x[i], power - 1.0f);
    }
  });
}

DEMI_REGISTER_LAYER(Power);

}  // namespace demi
