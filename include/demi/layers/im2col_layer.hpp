#ifndef DEMI_LAYERS_IM2COL_LAYER_HPP_
#define DEMI_LAYERS_IM2COL_LAYER_HPP_

#include "demi/layer.hpp"
#include "demi/util/im2col.hpp"

namespace demi {

/// @brief Unfolds each image into the matrix a convolution multiplies, as in
/// Caffe's Im2col layer:
/// y[n, (c kh + i) kw + j, oh, ow] = x[n, c, oh * stride_h - pad_h + i * dilation_h,
///                                       ow * stride_w - pad_w + j * dilation_w]
/// (0 in the padding).
///
/// Bottom: N x C x H x W. Top: N x (C * kernel_h * kernel_w) x out_h x out_w
/// with out = (in + 2 pad - (dilation (k - 1) + 1)) / stride + 1. The window
/// settings are Convolution's (convolution_param kernel_size, pad, stride,
/// dilation and their _h/_w forms; num_output, group and the fillers are
/// ignored). Only axis 1 is supported.
///
/// Backward folds the top gradient back with Col2im, summing where windows
/// overlap; it reads neither the bottom nor the top data. No buffers.
class Im2colLayer : public OneBodyLayer<Layer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Im2col"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;

 private:
  ConvGeometry geometry_{};  ///< one whole image, all channels
  int64_t num_ = 0;
};

}  // namespace demi

#endif  // DEMI_LAYERS_IM2COL_LAYER_HPP_
