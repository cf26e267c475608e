#ifndef DEMI_UTIL_IM2COL_HPP_
#define DEMI_UTIL_IM2COL_HPP_

#include <cstdint>

namespace demi {

/// Geometry of a 2-D convolution window over one image.
struct ConvGeometry {
  int64_t channels, height, width;
  int64_t kernel_h, kernel_w;
  int64_t pad_h, pad_w;
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;

  int64_t output_h() const {
    return (height + 2 * pad_h - (dilation_h * (kernel_h - 1) + 1)) / stride_h + 1;
  }
  int64_t output_w() const {
    return (width + 2 * pad_w - (dilation_w * (kernel_w - 1) + 1)) / stride_w + 1;
  }
};

/// Unfolds one C x H x W image into a (C * kh * kw) x (out_h * out_w) matrix,
/// padding with zeros, so that convolution becomes one GEMM.
void Im2col(const float* image, const ConvGeometry& g, float* columns);
/// The adjoint of Im2col: accumulates columns back into a zeroed image.
void Col2im(const float* columns, const ConvGeometry& g, float* image);

#ifndef CPU_ONLY
/// Device twins (im2col.cu): the same layout; GpuCol2im gathers each image
/// element's windows in the CPU order, so both agree bit for bit.
void GpuIm2col(const float* image, const ConvGeometry& g, float* columns);
void GpuCol2im(const float* columns, const ConvGeometry& g, float* image);
#endif

}  // namespace demi

#endif  // DEMI_UTIL_IM2COL_HPP_
