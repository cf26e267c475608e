#ifndef DEMI_LAYERS_CONV_LAYER_HPP_
#define DEMI_LAYERS_CONV_LAYER_HPP_

#include "demi/layer.hpp"
#include "demi/util/im2col.hpp"

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
class ConvolutionLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Convolution"; }
  int MinBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  bool EqualNumBottomTopBlobs() const override { return true; }
  bool BackwardReadsBottomData(int) const override { return true; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;

 private:
  ConvGeometry geometry_{};  ///< one whole image, all channels
  int64_t num_output_ = 0;
  int64_t group_ = 1;
  bool bias_term_ = true;
  bool is_1x1_ = false;      ///< the image is its own column matrix
  int64_t num_ = 0;          ///< images per bottom
  int64_t out_spatial_ = 0;  ///< out_h * out_w
  int64_t kernel_dim_ = 0;   ///< (C / group) * kernel_h * kernel_w: rows of a group's columns
  Blob columns_;             ///< (C * kernel_h * kernel_w) x out_spatial, scratch
};

}  // namespace demi

#endif  // DEMI_LAYERS_CONV_LAYER_HPP_
