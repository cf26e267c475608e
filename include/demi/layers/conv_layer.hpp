#ifndef DEMI_LAYERS_CONV_LAYER_HPP_
#define DEMI_LAYERS_CONV_LAYER_HPP_

#include "demi/layers/base_conv_layer.hpp"

namespace demi {

/// @brief 2-D convolution, as in Caffe:
/// y[n, m] = b[m] + sum over c in group(m), i, j of
///           W[m, c, i, j] * x[n, c, oh * stride_h - pad_h + i * dilation_h,
///                                   ow * stride_w - pad_w + j * dilation_w]
/// with zero padding.
///
/// Bottoms: one or more N x C x H x W blobs of one shape; top i is bottom i
/// convolved, N x num_output x out_h x out_w with
/// out = (in + 2 pad - (dilation (k - 1) + 1)) / stride + 1.
/// W is num_output x (C / group) x kernel_h x kernel_w, b is num_output.
/// kernel_size, pad, stride and dilation take 1 value (both dims) or 2
/// (h then w); kernel_h/kernel_w, pad_h/pad_w, stride_h/stride_w replace them.
/// Channels and num_output must be divisible by group (group == C gives a
/// depthwise convolution). Only axis 1 (2-D images) is supported.
///
/// Each image is unfolded by Im2col into a columns buffer and multiplied by W
/// with one GEMM per group; 1x1 kernels with stride 1 and no padding use the
/// image itself. The columns buffer is scratch. Backward reads the bottoms
/// (for dW) and not the tops.
class ConvolutionLayer : public BaseConvolutionLayer {
 public:
  using BaseConvolutionLayer::BaseConvolutionLayer;
  const char* type() const override { return "Convolution"; }

 protected:
  bool reverse_dimensions() const override { return false; }
  void ComputeOutputShape(const Blob& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_CONV_LAYER_HPP_
