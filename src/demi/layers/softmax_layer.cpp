#include "demi/layers/softmax_layer.hpp"

#include <algorithm>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/math.hpp"

namespace demi {

void SoftmaxLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  RegisterBuffer("scale", &scale_, BufferLifetime::kScratch);
  DnnlSetUp();
}

void SoftmaxLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int canonical =
      CanonicalAxis(*this, *bottom[0], layer_param_.softmax_param().axis(), "softmax_param.axis");
  outer_num_ = bottom[0]->count(0, canonical);
  channels_ = bottom[0]->shape(canonical);
  inner_num_ = bottom[0]->count(canonical + 1);
  top[0]->ReshapeLike(*bottom[0]);
  scale_.Reshape(std::vector<int64_t>{inner_num_});
  if (dnnl_) DnnlReshape();
}

void SoftmaxLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (bottom[0]->count() == 0) return;  // an empty softmax axis has no row to start from
  if (DnnlReady()) return DnnlForward(*bottom[0], top[0]);
  const int64_t dim = channels_ * inner_num_;
  const float* bottom_data = bottom[0]->cpu_data();
  float* top_data = top[0]->mutable_cpu_data();
  float* scale = scale_.mutable_cpu_data();
  for (int64_t i = 0; i < outer_num_; ++i) {
    // One row of inner_num_ contiguous values per channel.
    const float* x = bottom_data + i * dim;
    float* y = top_data + i * dim;
    Copy(inner_num_, x, scale);
    for (int64_t c = 1; c < channels_; ++c) {
      const float* row = x + c * inner_num_;
      for (int64_t j = 0; j < inner_num_; ++j) scale[j] = std::max(scale[j], row[j]);
    }
    for (int64_t c = 0; c < channels_; ++c) {
      const int64_t at = c * inner_num_;
      for (int64_t j = 0; j < inner_num_; ++j) y[at + j] = std::exp(x[at + j] - scale[j]);
    }
    Set(inner_num_, 0.0f, scale);
    for (int64_t c = 0; c < channels_; ++c) Axpy(inner_num_, 1.0f, y + c * inner_num_, scale);
    for (int64_t c = 0; c < channels_; ++c) {
      Div(inner_num_, y + c * inner_num_, scale, y + c * inner_num_);
    }
  }
}

void SoftmaxLayer::Backward_cpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  if (DnnlReady()) return DnnlBackward(*top[0], bottom[0]);
  const int64_t dim = channels_ * inner_num_;
  const float* top_data = top[0]->cpu_data();
  const float* top_diff = top[0]->cpu_diff();
  float* bottom_diff = bottom[0]->mutable_cpu_diff();
  float* dot = scale_.mutable_cpu_data();
  for (int64_t i = 0; i < outer_num_; ++i) {
    const float* y = top_data + i * dim;
    const float* dy = top_diff + i * dim;
    float* dx = bottom_diff + i * dim;
    // Every dot first: in place, dx and dy are one array.
    Set(inner_num_, 0.0f, dot);
    for (int64_t c = 0; c < channels_; ++c) {
      const int64_t at = c * inner_num_;
      for (int64_t j = 0; j < inner_num_; ++j) dot[j] += dy[at + j] * y[at + j];
    }
    for (int64_t c = 0; c < channels_; ++c) {
      const int64_t at = c * inner_num_;
      for (int64_t j = 0; j < inner_num_; ++j) dx[at + j] = y[at + j] * (dy[at + j] - dot[j]);
    }
  }
}

DEMI_REGISTER_LAYER(Softmax);

}  // namespace demi
