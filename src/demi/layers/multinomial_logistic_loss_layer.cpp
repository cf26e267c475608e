#include "demi/layers/multinomial_logistic_loss_layer.hpp"

#include <algorithm>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/math.hpp"

namespace demi {
namespace {

constexpr float kLogThreshold = 1e-20f;

}  // namespace

void MultinomialLogisticLossLayer::Reshape(const std::vector<Blob*>& bottom,
                                           const std::vector<Blob*>& top) {
  ReshapeSamples(bottom, top, 1, "labels");
}

void MultinomialLogisticLossLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                               const std::vector<Blob*>& top) {
  const float* prob = bottom[0]->cpu_data();
  const float* label = bottom[1]->cpu_data();
  double loss = 0;
  for (int64_t n = 0; n < num_; ++n) {
    const float p = prob[n * dim_ + WholeClassLabel(*this, label[n], n, dim_, *bottom[0])];
    loss -= std::log(std::max(p, kLogThreshold));
  }
  top[0]->mutable_cpu_data()[0] = static_cast<float>(SampleMean(loss));
}

void MultinomialLogisticLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                                const std::vector<bool>& propagate_down,
                                                const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 1, "labels");
  if (!propagate_down[0]) return;
  const float scale = -SampleScale(*top[0]);
  const float* prob = bottom[0]->cpu_data();
  const float* label = bottom[1]->cpu_data();
  float* dx = bottom[0]->mutable_cpu_diff();
  Set(bottom[0]->count(), 0.0f, dx);
  for (int64_t n = 0; n < num_; ++n) {
    const int64_t at = n * dim_ + static_cast<int64_t>(label[n]);
    dx[at] = scale / std::max(prob[at], kLogThreshold);
  }
}

DEMI_REGISTER_LAYER(MultinomialLogisticLoss);

}  // namespace demi
