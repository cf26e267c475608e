#include "demi/layers/hinge_loss_layer.hpp"

#include <algorithm>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"

namespace demi {

void HingeLossLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  RegisterBuffer("gradient", &gradient_, BufferLifetime::kSavedForBackward);
}

void HingeLossLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  ReshapeSamples(bottom, top, 1, "labels");
  gradient_.ReshapeLike(*bottom[0]);
}

void HingeLossLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const bool l2 = layer_param_.hinge_loss_param().norm() == HingeLossParameter::L2;
  const float* x = bottom[0]->cpu_data();
  const float* label = bottom[1]->cpu_data();
  float* gradient = gradient_.mutable_cpu_data();
  double loss = 0;
  for (int64_t n = 0; n < num_; ++n) {
    const int64_t target = WholeClassLabel(*this, label[n], n, dim_, *bottom[0]);
    for (int64_t k = 0; k < dim_; ++k) {
      const int64_t i = n * dim_ + k;
      const float t = k == target ? 1.0f : -1.0f;
      const float margin = std::max(0.0f, 1.0f - t * x[i]);
      loss += l2 ? double(margin) * margin : margin;
      gradient[i] = l2 ? -2.0f * t * margin : (margin > 0 ? -t : 0.0f);
    }
  }
  top[0]->mutable_cpu_data()[0] = static_cast<float>(SampleMean(loss));
}

void HingeLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 1, "labels");
  if (!propagate_down[0]) return;
  const float scale = SampleScale(*top[0]);
  const float* gradient = gradient_.cpu_data();
  float* dx = bottom[0]->mutable_cpu_diff();
  for (int64_t i = 0; i < gradient_.count(); ++i) dx[i] = scale * gradient[i];
}

DEMI_REGISTER_LAYER(HingeLoss);

}  // namespace demi
