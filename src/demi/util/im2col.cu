#include "demi/util/cuda_kernel.cuh"
#include "demi/util/im2col.hpp"

namespace demi {

namespace {

// kernels

/// One thread per column element (c, kh, kw, oh, ow), as Im2col lays them out.
__global__ void Im2colKernel(int64_t n, const float* image, ConvGeometry g, int64_t out_h,
                             int64_t out_w, float* columns) {
  for (int64_t col = GridStart(); col < n; col += GridStride()) {
    const int64_t ow = col % out_w;
    const int64_t oh = col / out_w % out_h;
    const int64_t kw = col / (out_w * out_h) % g.kernel_w;
    const int64_t kh = col / (out_w * out_h * g.kernel_w) % g.kernel_h;
    const int64_t c = col / (out_w * out_h * g.kernel_w * g.kernel_h);
    const int64_t ih = oh * g.stride_h - g.pad_h + kh * g.dilation_h;
    const int64_t iw = ow * g.stride_w - g.pad_w + kw * g.dilation_w;
    const bool inside = ih >= 0 && ih < g.height && iw >= 0 && iw < g.width;
    columns[col] = inside ? image[(c * g.height + ih) * g.width + iw] : 0.0f;
  }
}

/// One thread per image element: sums the column entries that read it, in
/// (kh, kw) order like the CPU walk. A gather, so no atomics and the same
/// result every run.
__global__ void Col2imKernel(int64_t n, const float* columns, ConvGeometry g, int64_t out_h,
                             int64_t out_w, float* image) {
  for (int64_t index = GridStart(); index < n; index += GridStride()) {
    const int64_t iw = index % g.width;
    const int64_t ih = index / g.width % g.height;
    const int64_t c = index / (g.width * g.height);
    float sum = 0;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t h = ih + g.pad_h - kh * g.dilation_h;
      if (h < 0 || h % g.stride_h != 0 || h / g.stride_h >= out_h) continue;
      const int64_t oh = h / g.stride_h;
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t w = iw + g.pad_w - kw * g.dilation_w;
        if (w < 0 || w % g.stride_w != 0 || w / g.stride_w >= out_w) continue;
        const int64_t ow = w / g.stride_w;
        sum += columns[(((c * g.kernel_h + kh) * g.kernel_w + kw) * out_h + oh) * out_w + ow];
      }
    }
    image[index] = sum;
  }
}

}  // namespace

// launchers

void GpuIm2col(const float* image, const ConvGeometry& g, float* columns) {
  const int64_t out_h = g.output_h(), out_w = g.output_w();
  const int64_t n = g.channels * g.kernel_h * g.kernel_w * out_h * out_w;
  if (n <= 0) return;
  Im2colKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, image, g, out_h, out_w,
                                                                 columns);
  CheckLaunch("Im2colKernel");
}

void GpuCol2im(const float* columns, const ConvGeometry& g, float* image) {
  const int64_t n = g.channels * g.height * g.width;
  if (n <= 0) return;
  Col2imKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, columns, g, g.output_h(),
                                                                 g.output_w(), image);
  CheckLaunch("Col2imKernel");
}

}  // namespace demi
