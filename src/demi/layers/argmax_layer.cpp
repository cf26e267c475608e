#include "demi/layers/argmax_layer.hpp"

#include <algorithm>
#include <numeric>

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"

namespace demi {

void ArgMaxLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ArgMaxParameter& param = layer_param_.argmax_param();
  out_max_val_ = param.out_max_val();
  has_axis_ = param.has_axis();
  top_k_ = param.top_k();
  DEMI_CHECK(top_k_ >= 1, "ArgMax layer '", layer_param_.name(), "' needs top_k >= 1");
}

void ArgMaxLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ArgMaxParameter& param = layer_param_.argmax_param();
  const Blob& x = *bottom[0];
  std::vector<int64_t> top_shape;
  if (has_axis_) {
    const int axis = CanonicalAxis(*this, x, param.axis(), "argmax_param.axis");
    outer_ = x.count(0, axis);
    dim_ = x.shape(axis);
    inner_ = x.count(axis + 1);
    top_shape = x.shape();
    top_shape[axis] = top_k_;
  } else {
    outer_ = x.num_axes() > 0 ? x.shape(0) : 1;
    dim_ = x.num_axes() > 0 ? x.count(1) : 0;
    inner_ = 1;
    top_shape.assign(std::max(x.num_axes(), 3), 1);
    top_shape[0] = outer_;
    top_shape[1] = out_max_val_ ? 2 : 1;
    top_shape[2] = top_k_;
  }
  DEMI_CHECK(top_k_ <= dim_, "ArgMax layer '", layer_param_.name(), "': top_k ", top_k_,
             " exceeds the ", dim_, " values searched in bottom ", x.shape_string());
  top[0]->Reshape(top_shape);
  order_.resize(dim_);
}

void ArgMaxLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  for (int64_t o = 0; o < outer_; ++o) {
    for (int64_t j = 0; j < inner_; ++j) {
      const float* values = x + o * dim_ * inner_ + j;
      auto before = [&](int64_t a, int64_t b) {
        const float va = values[a * inner_];
        const float vb = values[b * inner_];
        return va > vb || (va == vb && a > b);
      };
      std::iota(order_.begin(), order_.end(), int64_t{0});
      std::partial_sort(order_.begin(), order_.begin() + top_k_, order_.end(), before);
      for (int64_t k = 0; k < top_k_; ++k) {
        const float index = static_cast<float>(order_[k]);
        const float value = values[order_[k] * inner_];
        if (has_axis_) {
          y[(o * top_k_ + k) * inner_ + j] = out_max_val_ ? value : index;
        } else if (out_max_val_) {
          y[o * 2 * top_k_ + k] = index;
          y[o * 2 * top_k_ + top_k_ + k] = value;
        } else {
          y[o * top_k_ + k] = index;
        }
      }
    }
  }
}

void ArgMaxLayer::Backward_cpu(const std::vector<Blob*>& top,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 0, "its bottom: the layer is not differentiable");
}

DEMI_REGISTER_LAYER(ArgMax);

}  // namespace demi
