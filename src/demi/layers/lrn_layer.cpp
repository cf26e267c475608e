#include "demi/layers/lrn_layer.hpp"

#include <algorithm>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void LRNLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const LRNParameter& param = layer_param_.lrn_param();
  const int64_t size = param.local_size();
  DEMI_CHECK(size % 2 == 1, "LRN layer '", layer_param_.name(), "' needs an odd local_size, got ",
             size);
  across_ = param.norm_region() == LRNParameter::ACROSS_CHANNELS;
  half_ = (size - 1) / 2;
  alpha_over_n_ = across_ ? param.alpha() / size : param.alpha() / (size * size);
  beta_ = param.beta();
  shift_ = across_ ? param.k() : 1.0f;
#ifdef USE_CUDNN
  CudnnSetUp();
  if (RunsCudnn()) return;  // cuDNN keeps no scale
#endif
  RegisterBuffer("scale", &scale_, BufferLifetime::kSavedForBackward);
  RegisterBuffer("ratio", &ratio_, BufferLifetime::kScratch);
  DnnlSetUp();
}

void LRNLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DEMI_CHECK(bottom[0]->num_axes() == 4, "LRN layer '", layer_param_.name(),
             "' needs a 4-D N x C x H x W bottom, got shape ", bottom[0]->shape_string());
  DEMI_CHECK(bottom[0] != top[0], "LRN layer '", layer_param_.name(),
             "' cannot run in place: its backward reads the bottom");
  num_ = bottom[0]->shape(0);
  channels_ = bottom[0]->shape(1);
  height_ = bottom[0]->shape(2);
  width_ = bottom[0]->shape(3);
  top[0]->ReshapeLike(*bottom[0]);
#ifdef USE_CUDNN
  if (RunsCudnn()) {
    CudnnReshape(*bottom[0]);
    return;
  }
#endif
  scale_.ReshapeLike(*bottom[0]);
  // The CPU's backward takes one image at a time through it; the GPU's
  // computes each ratio where it sums it.
  ratio_.Reshape(context_.device == Device::kGPU
                     ? std::vector<int64_t>{0}
                     : std::vector<int64_t>{channels_, height_, width_});
  if (dnnl_) DnnlReshape(*bottom[0], *top[0]);
}

double LRNLayer::WindowSum(const float* image, int64_t c, int64_t h, int64_t w) const {
  const int64_t plane = height_ * width_;
  double sum = 0;
  if (across_) {
    const int64_t c_end = std::min(c + half_ + 1, channels_);
    for (int64_t cc = std::max<int64_t>(c - half_, 0); cc < c_end; ++cc) {
      sum += image[cc * plane + h * width_ + w];
    }
    return sum;
  }
  const float* channel = image + c * plane;
  const int64_t h_end = std::min(h + half_ + 1, height_);
  const int64_t w_begin = std::max<int64_t>(w - half_, 0);
  const int64_t w_end = std::min(w + half_ + 1, width_);
  for (int64_t hh = std::max<int64_t>(h - half_, 0); hh < h_end; ++hh) {
    for (int64_t ww = w_begin; ww < w_end; ++ww) sum += channel[hh * width_ + ww];
  }
  return sum;
}

void LRNLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (DnnlReady()) return DnnlForward(*bottom[0], top[0]);
  const int64_t image = channels_ * height_ * width_;
  float* squares = ratio_.mutable_cpu_data();
  for (int64_t n = 0; n < num_; ++n) {
    const float* x = bottom[0]->cpu_data() + n * image;
    float* scale = scale_.mutable_cpu_data() + n * image;
    float* y = top[0]->mutable_cpu_data() + n * image;
    Sqr(image, x, squares);
    for (int64_t c = 0, i = 0; c < channels_; ++c) {
      for (int64_t h = 0; h < height_; ++h) {
        for (int64_t w = 0; w < width_; ++w, ++i) {
          scale[i] = shift_ + alpha_over_n_ * static_cast<float>(WindowSum(squares, c, h, w));
          y[i] = x[i] * std::pow(scale[i], -beta_);
        }
      }
    }
  }
}

void LRNLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  if (DnnlReady()) return DnnlBackward(*top[0], bottom[0]);
  const int64_t image = channels_ * height_ * width_;
  const float coeff = 2.0f * beta_ * alpha_over_n_;
  float* ratio = ratio_.mutable_cpu_data();
  for (int64_t n = 0; n < num_; ++n) {
    const float* x = bottom[0]->cpu_data() + n * image;
    const float* scale = scale_.cpu_data() + n * image;
    const float* dy = top[0]->cpu_diff() + n * image;
    float* dx = bottom[0]->mutable_cpu_diff() + n * image;
    // First the direct term dy scale^-beta, and ratio = dy x scale^(-beta-1).
    for (int64_t i = 0; i < image; ++i) {
      const float damp = std::pow(scale[i], -beta_);
      dx[i] = dy[i] * damp;
      ratio[i] = dy[i] * x[i] * damp / scale[i];
    }
    // Then every output whose window holds x_i (the window is symmetric).
    for (int64_t c = 0, i = 0; c < channels_; ++c) {
      for (int64_t h = 0; h < height_; ++h) {
        for (int64_t w = 0; w < width_; ++w, ++i) {
          dx[i] -= coeff * x[i] * static_cast<float>(WindowSum(ratio, c, h, w));
        }
      }
    }
  }
}

DEMI_REGISTER_LAYER(LRN);

}  // namespace demi
