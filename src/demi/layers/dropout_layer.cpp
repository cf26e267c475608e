#include "demi/layers/dropout_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/device_math.hpp"
#include "demi/util/math.hpp"
#ifndef CPU_ONLY
#include "demi/util/math_gpu.hpp"
#endif
#include "demi/util/threads.hpp"

namespace demi {

void DropoutLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  ratio_ = layer_param_.dropout_param().dropout_ratio();
  DEMI_CHECK(ratio_ >= 0.0f && ratio_ < 1.0f, "Dropout layer '", layer_param_.name(),
             "' needs dropout_ratio in [0, 1), got ", ratio_);
  scale_ = 1.0f / (1.0f - ratio_);
  RegisterBuffer("mask", &mask_, BufferLifetime::kSavedForBackward);
}

void DropoutLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  NeuronLayer::Reshape(bottom, top);
  if (phase_ == TRAIN) mask_.ReshapeLike(*bottom[0]);
}

void DropoutLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t count = bottom[0]->count();
  if (phase_ != TRAIN) {
    if (top[0] != bottom[0]) Copy(count, bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
    return;
  }
  // Keeping u >= p for u uniform in [0, 1) is a Bernoulli(1 - p) draw.
  float* mask = mask_.mutable_cpu_data();
  RngUniform(count, 0.0f, 1.0f, mask, rng());
  ParallelFor(count, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) mask[i] = mask[i] >= ratio_ ? scale_ : 0.0f;
  });
  Mul(count, bottom[0]->cpu_data(), mask, top[0]->mutable_cpu_data());
}

void DropoutLayer::Replay(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (phase_ != TRAIN) {
    Layer::Replay(bottom, top);
    return;
  }
  const int64_t count = bottom[0]->count();
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU && top[0]->storage_type() != FLOAT) {
    return ApplyMaskGpu(top[0]->storage_type(), count, bottom[0]->data()->gpu_data(),
                        top[0]->data()->mutable_gpu_data());
  }
  if (context_.device == Device::kGPU) {
    if (count > 0)
      GpuMul(count, bottom[0]->gpu_data(), mask_.gpu_data(), top[0]->mutable_gpu_data());
    return;
  }
#endif
  Mul(count, bottom[0]->cpu_data(), mask_.cpu_data(), top[0]->mutable_cpu_data());
}

void DropoutLayer::Backward_cpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const Device device = context_.device;
  const int64_t count = top[0]->count();
  if (phase_ != TRAIN) {
    if (top[0] != bottom[0]) {
      Copy(device, count, top[0]->diff_on(device), bottom[0]->mutable_diff_on(device));
    }
    return;
  }
  Mul(device, count, top[0]->diff_on(device), mask_.data_on(device),
      bottom[0]->mutable_diff_on(device));
}

DEMI_REGISTER_LAYER(Dropout);

}  // namespace demi
