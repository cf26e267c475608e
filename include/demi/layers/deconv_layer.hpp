#ifndef DEMI_LAYERS_DECONV_LAYER_HPP_
#define DEMI_LAYERS_DECONV_LAYER_HPP_

#include "demi/layers/base_conv_layer.hpp"

namespace demi {

/// @brief 2-D deconvolution (transposed convolution), as in Caffe: the
/// adjoint of Convolution with the same convolution_param. Every bottom
/// pixel scatters its weighted kernel into the top:
/// y[n, g M + m, ih * stride_h - pad_h + i * dilation_h,
///               iw * stride_w - pad_w + j * dilation_w] += W[c, m, i, j] * x[n, c, ih, iw]
/// for every bottom channel c of group g (M = num_output / group), then
/// y[n, m] += b[m]; contributions landing in the padding are dropped.
///
/// Bottoms: one or more N x C x H x W blobs of one shape; top i is bottom i
/// deconvolved, N x num_output x out_h x out_w with
/// out = stride (in - 1) + dilation (k - 1) + 1 - 2 pad.
/// W is C x (num_output / group) x kernel_h x kernel_w (Caffe's layout: the
/// convolution that maps the top back to the bottom), b is num_output.
/// Settings and groups as in Convolution; a "bilinear" weight_filler with
/// kernel 2 f - f % 2, stride f, pad ceil((f - 1) / 2) and group = C =
/// num_output gives f-times bilinear upsampling.
///
/// Forward computes the columns W^T x and folds them into the top with
/// Col2im; the columns buffer is scratch. Backward reads the bottoms (for dW)
/// and not the tops.
class DeconvolutionLayer : public BaseConvolutionLayer {
 public:
  using BaseConvolutionLayer::BaseConvolutionLayer;
  const char* type() const override { return "Deconvolution"; }

 protected:
  bool reverse_dimensions() const override { return true; }
  void ComputeOutputShape(const Blob& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_DECONV_LAYER_HPP_
