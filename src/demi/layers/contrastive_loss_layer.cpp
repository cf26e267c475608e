#include "demi/layers/contrastive_loss_layer.hpp"

#include <algorithm>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void ContrastiveLossLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                      const std::vector<Blob*>& top) {
  RegisterBuffer("diff", &diff_, BufferLifetime::kSavedForBackward);
  RegisterBuffer("coeff", &coeff_, BufferLifetime::kSavedForBackward);
}

void ContrastiveLossLayer::Reshape(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  DEMI_CHECK(bottom[0]->count() == bottom[1]->count(), "ContrastiveLoss layer '",
             layer_param_.name(), "': features ", bottom[0]->shape_string(), " and ",
             bottom[1]->shape_string(), " differ in their number of elements");
  ReshapeSamples(bottom, top, 2, "similarity labels");
  diff_.ReshapeLike(*bottom[0]);
  coeff_.Reshape(std::vector<int64_t>{num_});
}

void ContrastiveLossLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                       const std::vector<Blob*>& top) {
  const ContrastiveLossParameter& param = layer_param_.contrastive_loss_param();
  const float margin = param.margin();
  float* diff = diff_.mutable_cpu_data();
  Sub(bottom[0]->count(), bottom[0]->cpu_data(), bottom[1]->cpu_data(), diff);
  const float* similar = bottom[2]->cpu_data();
  float* coeff = coeff_.mutable_cpu_data();
  double loss = 0;
  for (int64_t n = 0; n < num_; ++n) {
    const double dist_sq = Dot(dim_, diff + n * dim_, diff + n * dim_);
    if (static_cast<int64_t>(similar[n]) != 0) {
      loss += dist_sq;
      coeff[n] = 1.0f;
    } else if (param.legacy_version()) {
      const double inside = margin - dist_sq;
      loss += std::max(inside, 0.0);
      coeff[n] = inside > 0 ? -1.0f : 0.0f;
    } else {
      const double dist = std::sqrt(dist_sq);
      const double inside = margin - dist;
      loss += inside > 0 ? inside * inside : 0.0;
      coeff[n] = inside > 0 ? static_cast<float>(-inside / (dist + 1e-4)) : 0.0f;
    }
  }
  top[0]->mutable_cpu_data()[0] = static_cast<float>(SampleMean(loss) / 2.0);
}

void ContrastiveLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 2, "similarity labels");
  const float* diff = diff_.cpu_data();
  const float* coeff = coeff_.cpu_data();
  for (int b = 0; b < 2; ++b) {
    if (!propagate_down[b]) continue;
    const float alpha = b == 0 ? SampleScale(*top[0]) : -SampleScale(*top[0]);
    float* dx = bottom[b]->mutable_cpu_diff();
    for (int64_t n = 0; n < num_; ++n) {
      const float c = alpha * coeff[n];
      for (int64_t k = n * dim_; k < (n + 1) * dim_; ++k) dx[k] = c * diff[k];
    }
  }
}

DEMI_REGISTER_LAYER(ContrastiveLoss);

}  // namespace demi
