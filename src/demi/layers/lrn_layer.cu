#include <cmath>

#include "demi/layers/lrn_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

struct LrnShape {
  int64_t channels, height, width, half;
  bool across;
};

/// The sum, in double as the CPU's WindowSum, of `image` (one C x H x W
/// image) over the window centred on (c, h, w); `square` sums squares.
__device__ double WindowSum(const float* image, LrnShape s, int64_t c, int64_t h, int64_t w,
                            bool square) {
  const int64_t plane = s.height * s.width;
  double sum = 0;
  if (s.across) {
    const int64_t c_end = min(c + s.half + 1, s.channels);
    for (int64_t cc = max(c - s.half, int64_t{0}); cc < c_end; ++cc) {
      const float v = image[cc * plane + h * s.width + w];
      sum += square ? v * v : v;
    }
    return sum;
  }
  const float* channel = image + c * plane;
  const int64_t h_end = min(h + s.half + 1, s.height);
  const int64_t w_begin = max(w - s.half, int64_t{0});
  const int64_t w_end = min(w + s.half + 1, s.width);
  for (int64_t hh = max(h - s.half, int64_t{0}); hh < h_end; ++hh) {
    for (int64_t ww = w_begin; ww < w_end; ++ww) {
      const float v = channel[hh * s.width + ww];
      sum += square ? v * v : v;
    }
  }
  return sum;
}

/// One thread per element of the whole batch: scale and y = x scale^-beta.
__global__ void LrnForwardKernel(int64_t n, const float* x, LrnShape s, float shift,
                                 float alpha_over_n, float beta, float* scale, float* y) {
  const int64_t image = s.channels * s.height * s.width;
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const int64_t w = i % s.width;
    const int64_t h = i / s.width % s.height;
    const int64_t c = i / (s.width * s.height) % s.channels;
    const float* x_n = x + i / image * image;
    scale[i] = shift + alpha_over_n * static_cast<float>(WindowSum(x_n, s, c, h, w, true));
    y[i] = x[i] * powf(scale[i], -beta);
  }
}

/// One image: dx = dy scale^-beta and ratio = dy x scale^(-beta - 1).
__global__ void LrnDirectKernel(int64_t n, const float* x, const float* scale, const float* dy,
                                float beta, float* dx, float* ratio) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const float damp = powf(scale[i], -beta);
    dx[i] = dy[i] * damp;
    ratio[i] = dy[i] * x[i] * damp / scale[i];
  }
}

/// One image: dx -= coeff x * the window sum of ratio (the window is
/// symmetric, so it gathers every output whose window holds x_i).
__global__ void LrnCrossKernel(int64_t n, const float* x, const float* ratio, LrnShape s,
                               float coeff, float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const int64_t w = i % s.width;
    const int64_t h = i / s.width % s.height;
    const int64_t c = i / (s.width * s.height);
    dx[i] -= coeff * x[i] * static_cast<float>(WindowSum(ratio, s, c, h, w, false));
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
  Launch("LrnForwardKernel", CudaBlocks(n), LrnForwardKernel, n, bottom[0]->gpu_data(), s, shift_,
         alpha_over_n_, beta_, scale_.mutable_gpu_data(), top[0]->mutable_gpu_data());
}

void LRNLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  if (!propagate_down[0] || bottom[0]->count() == 0) return;
#ifdef USE_CUDNN
  if (RunsCudnn()) {
    CudnnBackward(*top[0], bottom[0]);
    return;
  }
#endif
  const int64_t image = channels_ * height_ * width_;
  if (image == 0) return;
  const LrnShape s{channels_, height_, width_, half_, across_};
  const float coeff = 2.0f * beta_ * alpha_over_n_;
  float* ratio = ratio_.mutable_gpu_data();
  // One image at a time: ratio holds one image, as on the CPU.
  for (int64_t n = 0; n < num_; ++n) {
    const float* x = bottom[0]->gpu_data() + n * image;
    const float* scale = scale_.gpu_data() + n * image;
    const float* dy = top[0]->gpu_diff() + n * image;
    float* dx = bottom[0]->mutable_gpu_diff() + n * image;
    Launch("LrnDirectKernel", CudaBlocks(image), LrnDirectKernel, image, x, scale, dy, beta_, dx,
           ratio);
    Launch("LrnCrossKernel", CudaBlocks(image), LrnCrossKernel, image, x, ratio, s, coeff, dx);
  }
}

}  // namespace demi
