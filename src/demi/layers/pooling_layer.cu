#include "demi/layers/pooling_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"
#include "demi/util/stored_types.cuh"

namespace demi {

/// The window geometry of pooling_layer.cpp, passed by value to kernels;
/// `channels` > 0 for tensors stored channels last, 0 in Caffe's layout.
struct PoolKernelShape {
  int64_t height, width, pooled_h, pooled_w;
  int64_t kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w;
  int64_t channels;
};

namespace {

// kernels

/// Element i of a tensor of rows x cols planes: its row and column, and in
/// a tensor of `other_plane`-element planes in the same layout (the other
/// side of the pooling), the first element of the same image and channel
/// and the step from one pixel to the next (Caffe's layout: 1; channels
/// last: the channels).
struct Pixel {
  int64_t row, col, base, step;
};
__device__ inline Pixel Locate(int64_t i, int64_t rows, int64_t cols, int64_t other_plane,
                               int64_t channels) {
  if (channels == 0) return {i / cols % rows, i % cols, i / (rows * cols) * other_plane, 1};
  const int64_t pixel = i / channels;
  return {pixel / cols % rows, pixel % cols,
          pixel / (rows * cols) * other_plane * channels + i % channels, channels};
}

/// One dimension of output `out`'s window, as PoolWindow in the CPU code:
/// [begin, end) clipped to in + pad (AVE's divisor), [lo, hi) inside the image.
__device__ inline void Window(int64_t out, int64_t kernel, int64_t pad, int64_t stride, int64_t in,
                              int64_t* begin, int64_t* end, int64_t* lo, int64_t* hi) {
  *begin = out * stride - pad;
  *end = min(*begin + kernel, in + pad);
  *lo = max(*begin, int64_t{0});
  *hi = min(*end, in);
}

/// The outputs whose window holds input row (or column) `i`: [first, last).
__device__ inline void Covering(int64_t i, int64_t kernel, int64_t pad, int64_t stride,
                                int64_t pooled, int64_t* first, int64_t* last) {
  *first = i + pad < kernel ? 0 : (i + pad - kernel) / stride + 1;
  *last = min((i + pad) / stride + 1, pooled);
}

// Written once over the type T the bottom and top are stored in (float,
// float16, bfloat16): loads widened, sums in float or double, each output
// rounded once (util/stored_types.cuh); argmax stays float.

/// One thread per output: the first largest value in the clipped window, in
/// the CPU's row-major order, and its index in the plane (-1, value 0, for a
/// window wholly outside the image).
template <typename T>
__global__ void MaxPoolForwardKernel(int64_t n, const T* x, PoolKernelShape s, T* y,
                                     float* argmax) {
  for (int64_t out = GridStart(); out < n; out += GridStride()) {
    const Pixel p = Locate(out, s.pooled_h, s.pooled_w, s.height * s.width, s.channels);
    const T* x_p = x + p.base;
    int64_t hb, he, hlo, hhi, wb, we, wlo, whi;
    Window(p.row, s.kernel_h, s.pad_h, s.stride_h, s.height, &hb, &he, &hlo, &hhi);
    Window(p.col, s.kernel_w, s.pad_w, s.stride_w, s.width, &wb, &we, &wlo, &whi);
    int64_t best = -1;
    float best_value = 0.0f;
    for (int64_t h = hlo; h < hhi; ++h) {
      for (int64_t w = wlo; w < whi; ++w) {
        const float value = Widen(x_p[(h * s.width + w) * p.step]);
        if (best < 0 || value > best_value) {
          best = h * s.width + w;
          best_value = value;
        }
      }
    }
    y[out] = Narrow<T>(best_value);
    argmax[out] = static_cast<float>(best);
  }
}

/// One thread per output: the clipped window's sum (in double, as the CPU)
/// over the window's size clipped to [-pad, in + pad).
template <typename T>
__global__ void AvePoolForwardKernel(int64_t n, const T* x, PoolKernelShape s, T* y) {
  for (int64_t out = GridStart(); out < n; out += GridStride()) {
    const Pixel p = Locate(out, s.pooled_h, s.pooled_w, s.height * s.width, s.channels);
    const T* x_p = x + p.base;
    int64_t hb, he, hlo, hhi, wb, we, wlo, whi;
    Window(p.row, s.kernel_h, s.pad_h, s.stride_h, s.height, &hb, &he, &hlo, &hhi);
    Window(p.col, s.kernel_w, s.pad_w, s.stride_w, s.width, &wb, &we, &wlo, &whi);
    if (hlo >= hhi || wlo >= whi) {
      y[out] = Narrow<T>(0.0f);
      continue;
    }
    double sum = 0;
    for (int64_t h = hlo; h < hhi; ++h) {
      for (int64_t w = wlo; w < whi; ++w) sum += Widen(x_p[(h * s.width + w) * p.step]);
    }
    y[out] = Narrow<T>(static_cast<float>(sum / static_cast<double>((he - hb) * (we - wb))));
  }
}

/// One thread per input: sums dy of the outputs that chose it, in the CPU's
/// output order (a gather, no atomics).
template <typename T>
__global__ void MaxPoolBackwardKernel(int64_t n, const T* dy, const float* argmax,
                                      PoolKernelShape s, T* dx) {
  for (int64_t in = GridStart(); in < n; in += GridStride()) {
    const Pixel p = Locate(in, s.height, s.width, s.pooled_h * s.pooled_w, s.channels);
    const float me = static_cast<float>(p.row * s.width + p.col);
    int64_t oh_first, oh_last, ow_first, ow_last;
    Covering(p.row, s.kernel_h, s.pad_h, s.stride_h, s.pooled_h, &oh_first, &oh_last);
    Covering(p.col, s.kernel_w, s.pad_w, s.stride_w, s.pooled_w, &ow_first, &ow_last);
    float sum = 0;
    for (int64_t oh = oh_first; oh < oh_last; ++oh) {
      for (int64_t ow = ow_first; ow < ow_last; ++ow) {
        const int64_t out = p.base + (oh * s.pooled_w + ow) * p.step;
        if (argmax[out] == me) sum += Widen(dy[out]);
      }
    }
    dx[in] = Narrow<T>(sum);
  }
}

/// One thread per input: sums dy / window size of the windows holding it,
/// in the CPU's output order.
template <typename T>
__global__ void AvePoolBackwardKernel(int64_t n, const T* dy, PoolKernelShape s, T* dx) {
  for (int64_t in = GridStart(); in < n; in += GridStride()) {
    const Pixel p = Locate(in, s.height, s.width, s.pooled_h * s.pooled_w, s.channels);
    int64_t oh_first, oh_last, ow_first, ow_last;
    Covering(p.row, s.kernel_h, s.pad_h, s.stride_h, s.pooled_h, &oh_first, &oh_last);
    Covering(p.col, s.kernel_w, s.pad_w, s.stride_w, s.pooled_w, &ow_first, &ow_last);
    float sum = 0;
    for (int64_t oh = oh_first; oh < oh_last; ++oh) {
      int64_t hb, he, hlo, hhi;
      Window(oh, s.kernel_h, s.pad_h, s.stride_h, s.height, &hb, &he, &hlo, &hhi);
      for (int64_t ow = ow_first; ow < ow_last; ++ow) {
        int64_t wb, we, wlo, whi;
        Window(ow, s.kernel_w, s.pad_w, s.stride_w, s.width, &wb, &we, &wlo, &whi);
        sum += Widen(dy[p.base + (oh * s.pooled_w + ow) * p.step]) /
               static_cast<float>((he - hb) * (we - wb));
      }
    }
    dx[in] = Narrow<T>(sum);
  }
}

}  // namespace

// launchers

PoolKernelShape PoolingLayer::KernelShape() const {
  return {height_,
          width_,
          pooled_h_,
          pooled_w_,
          kernel_h_,
          kernel_w_,
          pad_h_,
          pad_w_,
          stride_h_,
          stride_w_,
          staging_.channels_last() ? channels_ : 0};
}

void PoolingLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
#ifdef USE_CUDNN
  if (CudnnReady()) return CudnnForward(*bottom[0], top[0]);
#endif
  const int64_t n = top[0]->count();
  if (n == 0) return;
  VisitStorageType(staging_.type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(staging_.BottomData(*bottom[0]));
    T* y = static_cast<T*>(staging_.MutableTopData(top[0]));
    if (method_ == PoolingParameter::MAX) {
      float* argmax = argmax_.mutable_gpu_data();
      Launch("MaxPoolForwardKernel", CudaBlocks(n), MaxPoolForwardKernel<T>, n, x, KernelShape(), y,
             argmax);
      if (top.size() > 1) GpuCopy(n, argmax, top[1]->mutable_gpu_data());
    } else {
      Launch("AvePoolForwardKernel", CudaBlocks(n), AvePoolForwardKernel<T>, n, x, KernelShape(),
             y);
    }
  });
  staging_.FinishTopData(top[0]);
}

void PoolingLayer::Backward_gpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  const int64_t n = bottom[0]->count();
  if (!propagate_down[0] || n == 0) return;
#ifdef USE_CUDNN
  if (CudnnReady()) return CudnnBackward(*top[0], bottom[0]);
#endif
  VisitStorageType(staging_.type(), [&](auto tag) {
    using T = decltype(tag);
    const T* dy = static_cast<const T*>(staging_.TopDiff(*top[0]));
    T* dx = static_cast<T*>(staging_.MutableBottomDiff(bottom[0]));
    if (method_ == PoolingParameter::MAX) {
      Launch("MaxPoolBackwardKernel", CudaBlocks(n), MaxPoolBackwardKernel<T>, n, dy,
             argmax_.gpu_data(), KernelShape(), dx);
    } else {
      Launch("AvePoolBackwardKernel", CudaBlocks(n), AvePoolBackwardKernel<T>, n, dy, KernelShape(),
             dx);
    }
  });
  staging_.FinishBottomDiff(bottom[0]);
}

}  // namespace demi
