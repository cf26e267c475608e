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
// (util/stored_types.cuh); scale stays float.

/// The sum, in double as the CPU's WindowSum, of value(k) over the window
/// centred on (c, h, w) of one C x H x W image, k the element's offset in
/// the image.
template <typename Value>
__device__ double WindowSum(LrnShape s, int64_t c, int64_t h, int64_t w, Value value) {
  const int64_t plane = s.height * s.width;
  double sum = 0;
  if (s.across) {
    const int64_t c_end = min(c + s.half + 1, s.channels);
    for (int64_t cc = max(c - s.half, int64_t{0}); cc < c_end; ++cc) {
      sum += value(cc * plane + h * s.width + w);
    }
    return sum;
  }
  const int64_t h_end = min(h + s.half + 1, s.height);
  const int64_t w_begin = max(w - s.half, int64_t{0});
  const int64_t w_end = min(w + s.half + 1, s.width);
  for (int64_t hh = max(h - s.half, int64_t{0}); hh < h_end; ++hh) {
    for (int64_t ww = w_begin; ww < w_end; ++ww) sum += value(c * plane + hh * s.width + ww);
  }
  return sum;
}

/// Element i of the batch: its image's first element, channel, row, column.
struct LrnPosition {
  int64_t first, c, h, w;
};
__device__ inline LrnPosition PositionOf(int64_t i, LrnShape s) {
  const int64_t plane = s.height * s.width, image = s.channels * plane;
  return {i / image * image, i / plane % s.channels, i / s.width % s.height, i % s.width};
}

/// One thread per element of the whole batch: scale and y = x scale^-beta.
template <typename T>
__global__ void LrnForwardKernel(int64_t n, const T* x, LrnShape s, float shift, float alpha_over_n,
                                 float beta, float* scale, T* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const LrnPosition p = PositionOf(i, s);
    const T* x_n = x + p.first;
    const double squares = WindowSum(s, p.c, p.h, p.w, [=](int64_t k) {
      const float v = Widen(x_n[k]);
      return v * v;
    });
    scale[i] = shift + alpha_over_n * static_cast<float>(squares);
    y[i] = Narrow<T>(Widen(x[i]) * powf(scale[i], -beta));
  }
}

/// One thread per element of the whole batch: dx = dy scale^-beta - coeff x
/// * the window sum of ratio = dy x scale^(-beta - 1) (the window is
/// symmetric, so it gathers every output whose window holds x_i), the ratio
/// computed where it is summed (no buffer of it), rounded once.
template <typename T>
__global__ void LrnBackwardKernel(int64_t n, const T* x, const float* scale, const T* dy,
                                  LrnShape s, float beta, float coeff, T* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const LrnPosition p = PositionOf(i, s);
    const T* x_n = x + p.first;
    const T* dy_n = dy + p.first;
    const float* scale_n = scale + p.first;
    const double ratios = WindowSum(s, p.c, p.h, p.w, [=](int64_t k) {
      return Widen(dy_n[k]) * Widen(x_n[k]) * powf(scale_n[k], -beta) / scale_n[k];
    });
    const float direct = Widen(dy[i]) * powf(scale[i], -beta);
    dx[i] = Narrow<T>(direct - coeff * Widen(x[i]) * static_cast<float>(ratios));
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
  VisitStorageType(bottom[0]->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    Launch("LrnBackwardKernel", CudaBlocks(n), LrnBackwardKernel<T>, n, GpuDataAs<T>(*bottom[0]),
           scale_.gpu_data(), GpuDiffAs<T>(*top[0]), s, beta_, coeff,
           MutableGpuDiffAs<T>(bottom[0]));
  });
}

}  // namespace demi
