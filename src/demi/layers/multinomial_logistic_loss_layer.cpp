#include "demi/layers/multinomial_logistic_loss_layer.hpp"

#include <algorithm>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {
namespace {

constexpr float kLogThreshold = 1e-20f;

}  // namespace

void MultinomialLogisticLossLayer::Reshape(const std::vector<Blob*>& bottom,
                                           const std::vector<Blob*>& top) {
  LossLayer::Reshape(bottom, top);
  num_ = bottom[0]->shape(0);
  dim_ = num_ > 0 ? bottom[0]->count() / num_ : 0;
  DEMI_CHECK(bottom[1]->count() == num_, "MultinomialLogisticLoss layer '", layer_param_.name(),
             "': probabilities ", bottom[0]->shape_string(), " need ", num_,
             " labels, but the labels have shape ", bottom[1]->shape_string());
}

void MultinomialLogisticLossLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                               const std::vector<Blob*>& top) {
  const float* prob = bottom[0]->cpu_data();
  const float* label = bottom[1]->cpu_data();
  double loss = 0;
  for (int64_t n = 0; n < num_; ++n) {
    DEMI_CHECK(
        label[n] >= 0 && label[n] < static_cast<float>(dim_) && label[n] == std::floor(label[n]),
        "MultinomialLogisticLoss layer '", layer_param_.name(), "': label ", label[n], " at index ",
        n, " is not a class in [0, ", dim_, ") for probabilities ", bottom[0]->shape_string());
    const float p = prob[n * dim_ + static_cast<int64_t>(label[n])];
    loss -= std::log(std::max(p, kLogThreshold));
  }
  top[0]->mutable_cpu_data()[0] = static_cast<float>(loss / std::max<int64_t>(num_, 1));
}

void MultinomialLogisticLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                                const std::vector<bool>& propagate_down,
                                                const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 1, "labels");
  if (!propagate_down[0]) return;
  const float scale = -top[0]->cpu_diff()[0] / static_cast<float>(std::max<int64_t>(num_, 1));
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
