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

DEMI_REGISTER_LAYER(Deconvolution);

}  // namespace demi
