#include <cmath>

#include "demi/layers/lrn_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

// kernels

struct LrnShape {
  int64_t channels, height, width, half;
  bool across;
};

// Written once over the type T the bottom and top (and their gradients)
// are stored in (float, float16, bfloat16), in float arithmetic
// (util/stored_types.cuh); scale and ratio stay float.

/// The sum, in double as the CPU's WindowSum, of `image` (one C x H x W
/// image) over the window centred on (c, h, w); `square` sums squares.
template <typename T>
__device__ double WindowSum(const T* image, LrnShape s, int64_t c, int64_t h, int64_t w,
                            bool square) {
  const int64_t plane = s.height * s.width;
  double sum = 0;
  if (s.across) {
    const int64_t c_end = min(c + s.half + 1, s.channels);
    for (int64_t cc = max(c - s.half, int64_t{0}); cc < c_end; ++cc) {
      const float v = Widen(image[cc * plane + h * s.width + w]);
      sum += square ? v * v : v;
    }
    return sum;
  }
  const T* channel = image + c * plane;
  const int64_t h_end = min(h + s.half + 1, s.height);
  const int64_t w_begin = max(w - s.half, int64_t{0});
  const int64_t w_end = min(w + s.half + 1, s.width);
  for (int64_t hh = max(h - s.half, int64_t{0}); hh < h_end; ++hh) {
    for (int64_t ww = w_begin; ww < w_end; ++ww) {
      const float v = Widen(channel[hh * s.width + ww]);
      sum += square ? v * v : v;
    }
  }
  return sum;
}

/// One thread per element of the whole batch: scale and y = x scale^-beta.
template <typename T>
__global__ void LrnForwardKernel(int64_t n, const T* x, LrnShape s, float shift, float alpha_over_n,
                                 float beta, float* scale, T* y) {
  const int64_t image = s.channels * s.height * s.width;
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const int64_t w = i % s.width;
    const int64_t h = i / s.width % s.height;
    const int64_t c = i / (s.width * s.height) % s.channels;
    const T* x_n = x + i / image * image;
    scale[i] = shift + alpha_over_n * static_cast<float>(WindowSum(x_n, s, c, h, w, true));
    y[i] = Narrow<T>(Widen(x[i]) * powf(scale[i], -beta));
  }
}

/// ratio = dy x scale^(-beta - 1), element by element.
template <typename T>
__global__ void LrnRatioKernel(int64_t n, const T* x, const float* scale, const T* dy, float beta,
                               float* ratio) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    ratio[i] = Widen(dy[i]) * Widen(x[i]) * powf(scale[i], -beta) / scale[i];
  }
}

/// dx = dy scale^-beta - coeff x * the window sum of ratio (the window is
/// symmetric, so it gathers every output whose window holds x_i), rounded
/// once; one thread per element of `num` images.
template <typename T>
__global__ void LrnGradientKernel(int64_t n, const T* x, const float* scale, const T* dy,
                                  const float* ratio, LrnShape s, float beta, float coeff, T* dx) {
  const int64_t image = s.channels * s.height * s.width;
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const int64_t w = i % s.width;
    const int64_t h = i / s.width % s.height;
    const int64_t c = i / (s.width * s.height) % s.channels;
    const float direct = Widen(dy[i]) * powf(scale[i], -beta);
    const float* ratio_n = ratio + i / image * image;
    dx[i] = Narrow<T>(direct - coeff * Widen(x[i]) *
                                   static_cast<float>(WindowSum(ratio_n, s, c, h, w, false)));
  }
}

}  // namespace

// launchers

void LRNLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
#ifdef USE_CUDNN
  if (RunsCudnn()) {
    CudnnForward(*bottom[0], top[0]);
    return;
  }
#endif
  const LrnShape s{channels_, height_, width_, half_, across_};
  VisitStorageType(bottom[0]->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    Launch("LrnForwardKernel", CudaBlocks(n), LrnForwardKernel<T>, n, GpuDataAs<T>(*bottom[0]), s,
           shift_, alpha_over_n_, beta_, scale_.mutable_gpu_data(), MutableGpuDataAs<T>(top[0]));
  });
}

void LRNLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  const int64_t n = bottom[0]->count();
  if (!propagate_down[0] || n == 0) return;
#ifdef USE_CUDNN
  if (RunsCudnn()) {
    CudnnBackward(*top[0], bottom[0]);
    return;
  }
#endif
  const LrnShape s{channels_, height_, width_, half_, across_};
  const float coeff = 2.0f * beta_ * alpha_over_n_;
  // The whole batch in two passes (ratio holds the batch on a GPU).
  VisitStorageType(bottom[0]->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = GpuDataAs<T>(*bottom[0]);
    const T* dy = GpuDiffAs<T>(*top[0]);
    float* ratio = ratio_.mutable_gpu_data();
    Launch("LrnRatioKernel", CudaBlocks(n), LrnRatioKernel<T>, n, x, scale_.gpu_data(), dy, beta_,
           ratio);
    Launch("LrnGradientKernel", CudaBlocks(n), LrnGradientKernel<T>, n, x, scale_.gpu_data(), dy,
           ratio, s, beta_, coeff, MutableGpuDiffAs<T>(bottom[0]));
  });
}

}  // namespace demi
