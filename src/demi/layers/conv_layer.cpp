#include "demi/layers/conv_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

void ConvolutionLayer::ComputeOutputShape(const Blob& bottom) {
  CheckConvWindowFits(layer_param_, geometry_, bottom);
  geometry_.height = bottom.shape(2);
  geometry_.width = bottom.shape(3);
  top_h_ = geometry_.output_h();
  top_w_ = geometry_.output_w();
  output_spatial_ = top_h_ * top_w_;
}

void ConvolutionLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* w = blobs_[0]->cpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    const float* x = bottom[i]->cpu_data();
    float* y = top[i]->mutable_cpu_data();
    if (DnnlReady()) {
      DnnlConvolve(x, w, y);
      continue;
    }
    for (int64_t n = 0; n < num_; ++n) {
      ForwardGemm(x + n * in_size, w, y + n * out_size);
      if (bias_term_) AddBias(y + n * out_size);
    }
  }
}

void ConvolutionLayer::Backward_cpu(const std::vector<Blob*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob*>& bottom) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* w = blobs_[0]->cpu_data();
  const bool weight_grad = param_propagate_down(0);
  const bool bias_grad = bias_term_ && param_propagate_down(1);
  for (size_t i = 0; i < top.size(); ++i) {
    const float* dy = top[i]->cpu_diff();
    if (DnnlReady()) {
      if (weight_grad || bias_grad) {
        DnnlWeightGradient(bottom[i]->cpu_data(), dy,
                           weight_grad ? blobs_[0]->mutable_cpu_diff() : nullptr,
                           bias_grad ? blobs_[1]->mutable_cpu_diff() : nullptr);
      }
      if (propagate_down[i]) DnnlConvolveAdjoint(dy, w, bottom[i]->mutable_cpu_diff());
      continue;
    }
    if (bias_grad) {
      for (int64_t n = 0; n < num_; ++n) AccumulateBiasGradient(dy + n * out_size);
    }
    if (!weight_grad && !propagate_down[i]) continue;
    const float* x = bottom[i]->cpu_data();
    for (int64_t n = 0; n < num_; ++n) {
      // dW += dy * columns(x)^T; dx = col2im(W^T dy).
      if (weight_grad) {
        WeightGemm(x + n * in_size, dy + n * out_size, blobs_[0]->mutable_cpu_diff());
      }
      if (propagate_down[i]) {
        BackwardGemm(dy + n * out_size, w, bottom[i]->mutable_cpu_diff() + n * in_size);
      }
    }
  }
}

DEMI_REGISTER_LAYER(Convolution);

}  // namespace demi
