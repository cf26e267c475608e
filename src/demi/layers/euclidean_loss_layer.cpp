#include "demi/layers/euclidean_loss_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void EuclideanLossLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                    const std::vector<Blob*>& top) {
  RegisterBuffer("diff", &diff_, BufferLifetime::kSavedForBackward);
}

void EuclideanLossLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DEMI_CHECK(bottom[0]->count() == bottom[1]->count(), "EuclideanLoss layer '", layer_param_.name(),
             "': bottoms ", bottom[0]->shape_string(), " and ", bottom[1]->shape_string(),
             " differ in their number of elements");
  LossLayer::Reshape(bottom, top);
  diff_.ReshapeLike(*bottom[0]);
}

void EuclideanLossLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  const int64_t count = bottom[0]->count();
  float* diff = diff_.mutable_cpu_data();
  Sub(count, bottom[0]->cpu_data(), bottom[1]->cpu_data(), diff);
  const double sumsq = Dot(count, diff, diff);
  top[0]->mutable_cpu_data()[0] = static_cast<float>(sumsq / bottom[0]->shape(0) / 2.0);
}

void EuclideanLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob*>& bottom) {
  const int64_t count = diff_.count();
  const float* diff = diff_.cpu_data();
  for (int b = 0; b < 2; ++b) {
    if (!propagate_down[b]) continue;
    const float sign = b == 0 ? 1.0f : -1.0f;
    const float alpha = sign * top[0]->cpu_diff()[0] / static_cast<float>(bottom[0]->shape(0));
    float* dx = bottom[b]->mutable_cpu_diff();
    for (int64_t k = 0; k < count; ++k) dx[k] = alpha * diff[k];
  }
}

DEMI_REGISTER_LAYER(EuclideanLoss);

}  // namespace demi
