#include "demi/layers/clip_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// std::min(std::max(x, min), max) as the CPU computes it (a NaN stays NaN).
__global__ void ClipForwardKernel(int64_t n, float min, float max, const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const float above = x[i] < min ? min : x[i];
    y[i] = max < above ? max : above;
  }
}

/// Reads the top: min < y < max exactly where min < x < max.
__global__ void ClipBackwardKernel(int64_t n, float min, float max, const float* y, const float* dy,
                                   float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    dx[i] = y[i] > min && y[i] < max ? dy[i] : 0.0f;
  }
}

}  // namespace

// launchers

void ClipLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  ClipForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, min_, max_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CheckLaunch("ClipForwardKernel");
}

void ClipLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
  ClipBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, min_, max_, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CheckLaunch("ClipBackwardKernel");
}

}  // namespace demi
