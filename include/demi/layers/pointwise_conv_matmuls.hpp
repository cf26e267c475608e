#ifndef DEMI_LAYERS_POINTWISE_CONV_MATMULS_HPP_
#define DEMI_LAYERS_POINTWISE_CONV_MATMULS_HPP_

// The backward of a 1x1 convolution between channels-last (NHWC) blobs as
// oneDNN matmuls over its output pixels, where oneDNN 2.6's AMX convolution
// kernels for it ran at 0.1-0.5 of the matmuls' rate for weight gradients
// and strided image gradients, 0.7-0.9 for the others (bfloat16, ResNet-50's
// shapes, one thread; bench/README.md, "Channels last on an AMX CPU").
#include <cstdint>
#include <vector>

#include "demi/blob.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

/// A 1x1, unpadded, undilated convolution of one group, `in_channels` ->
/// `out_channels`, over `num` images of height x width, its output
/// out_height x out_width at the strides given.
struct PointwiseGeometry {
  int64_t num, in_channels, out_channels;
  int64_t height, width, out_height, out_width;
  int64_t stride_h, stride_w;

  /// P: the output pixels, over which the matmuls run.
  int64_t pixels() const { return num * out_height * out_width; }
  bool strided() const { return stride_h > 1 || stride_w > 1; }
};

/// Over the P output pixels, with dY (P x K) and X (P x C) as the NHWC
/// blobs hold them:
/// - the image gradient dX = dY W (W: K x C, Caffe's K x C x 1 x 1), where
///   the layer takes it;
/// - the weight gradient dW += dY^T X, and the bias's, dY's channel sums.
/// A strided convolution reads every stride-th pixel of its image: those P
/// are gathered into a buffer for the weight gradient, and the image
/// gradient is scattered from it, with zeros at the pixels between.
class PointwiseConvolutionMatmuls {
 public:
  /// Makes the matmuls for `g`, its blobs stored as `stored` (dY and X read
  /// in it, dX written in it): the image gradient's where `adjoint`.
  /// `pixels_buffer` and `weights_buffer` are layer buffers, used one pass at
  /// a time. Throws dnnl::error where oneDNN has no such matmul.
  void Reshape(const PointwiseGeometry& g, Type stored, bool adjoint, Blob* pixels_buffer,
               Blob* weights_buffer);
  bool adjoint() const { return has_adjoint_; }
  /// The scratchpads the matmuls need (the layer's shared one holds them).
  dnnl::memory::desc adjoint_scratchpad() const;
  dnnl::memory::desc weight_gradient_scratchpad() const;

  /// dx = the image gradient of dy (weights: Caffe's FLOAT K x C).
  void Adjoint(DnnlLayerState* state, const void* dy, const float* weights, void* dx);
  /// weights_diff += dY^T X, and bias_diff += dY's channel sums; either
  /// may be null.
  void WeightGradient(DnnlLayerState* state, const void* x, const void* dy, float* weights_diff,
                      float* bias_diff);

 private:
  PointwiseGeometry geometry_{};
  Type stored_ = FLOAT;  ///< of dY and X
  size_t element_bytes_ = 0;
  bool has_adjoint_ = false;
  Blob* pixels_buffer_ = nullptr;  ///< the strided convolution's P pixels
  dnnl::matmul::primitive_desc adjoint_pd_, weight_gradient_pd_;
  dnnl::matmul adjoint_, weight_gradient_;
  DnnlTensor weights_;  ///< W in the adjoint's type and layout
  dnnl::memory dy_, dx_, dy_transposed_, x_, dw_;
  std::vector<double> bias_sums_;
};

/// The pixels of an NHWC image that a 1x1 convolution of `g` reads, packed
/// (P x C elements of `element_bytes`).
void GatherStridedPixels(const PointwiseGeometry& g, size_t element_bytes, const void* image,
                         void* pixels);
/// The inverse: the image from its packed pixels, zeros between them.
void ScatterStridedPixels(const PointwiseGeometry& g, size_t element_bytes, const void* pixels,
                          void* image);

}  // namespace demi

#endif  // DEMI_LAYERS_POINTWISE_CONV_MATMULS_HPP_
