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

DEMI_REGISTER_LAYER(Convolution);

}  // namespace demi
