#include "demi/layers/deconv_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

void DeconvolutionLayer::ComputeOutputShape(const Blob& bottom) {
  const ConvGeometry& g = geometry_;
  const int64_t extent_h = g.dilation_h * (g.kernel_h - 1) + 1;
  const int64_t extent_w = g.dilation_w * (g.kernel_w - 1) + 1;
  top_h_ = g.stride_h * (bottom.shape(2) - 1) + extent_h - 2 * g.pad_h;
  top_w_ = g.stride_w * (bottom.shape(3) - 1) + extent_w - 2 * g.pad_w;
  DEMI_CHECK(bottom.shape(2) > 0 && bottom.shape(3) > 0 && top_h_ > 0 && top_w_ > 0,
             "Deconvolution layer '", layer_param_.name(), "': bottom shape ",
             bottom.shape_string(), " with stride ", g.stride_h, " x ", g.stride_w,
             ", dilated kernel ", extent_h, " x ", extent_w, " and pad ", g.pad_h, " x ", g.pad_w,
             " gives an empty top (", top_h_, " x ", top_w_, ")");
  geometry_.height = top_h_;
  geometry_.width = top_w_;
  output_spatial_ = bottom.count(2);
}

void DeconvolutionLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* w = blobs_[0]->cpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    const float* x = bottom[i]->cpu_data();
    float* y = top[i]->mutable_cpu_data();
    if (DnnlReady()) {
      DnnlConvolveAdjoint(x, w, y);
      if (bias_term_) DnnlAddBias(top[i]);
      continue;
    }
    for (int64_t n = 0; n < num_; ++n) {
      BackwardGemm(x + n * in_size, w, y + n * out_size);
      if (bias_term_) AddBias(y + n * out_size);
    }
  }
}

void DeconvolutionLayer::Backward_cpu(const std::vector<Blob*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob*>& bottom) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* w = blobs_[0]->cpu_data();
  const bool weight_grad = param_propagate_down(0);
  const bool bias_grad = bias_term_ && param_propagate_down(1);
  for (size_t i = 0; i < top.size(); ++i) {
    const float* dy = top[i]->cpu_diff();
    if (bias_grad && DnnlReady()) {
      DnnlAddBiasGradient(*top[i], blobs_[1]->mutable_cpu_diff());
    } else if (bias_grad) {
      for (int64_t n = 0; n < num_; ++n) AccumulateBiasGradient(dy + n * out_size);
    }
    if (!weight_grad && !propagate_down[i]) continue;
    const float* x = bottom[i]->cpu_data();
    if (DnnlReady()) {
      if (weight_grad) DnnlWeightGradient(dy, x, blobs_[0]->mutable_cpu_diff(), nullptr);
      if (propagate_down[i]) DnnlConvolve(dy, w, bottom[i]->mutable_cpu_diff());
      continue;
    }
    for (int64_t n = 0; n < num_; ++n) {
      // The top is the convolution's image: dW += x * columns(dy)^T and
      // dx = W * columns(dy), unfolding dy once for both.
      if (weight_grad) {
        WeightGemm(dy + n * out_size, x + n * in_size, blobs_[0]->mutable_cpu_diff());
      }
      if (propagate_down[i]) {
        ForwardGemm(dy + n * out_size, w, bottom[i]->mutable_cpu_diff() + n * in_size, weight_grad);
      }
    }
  }
}

DEMI_REGISTER_LAYER(Deconvolution);

}  // namespace demi
