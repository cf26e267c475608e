#include <algorithm>

#include "demi/layers/prelu_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// y = x where x > 0, else a[c] x, with channel c = (i / dim) % channels
/// (channels = 1 when the slope is shared).
__global__ void PReLUForwardKernel(int64_t n, int64_t channels, int64_t dim, const float* slope,
                                   const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const float a = slope[(i / dim) % channels];
    y[i] = x[i] > 0 ? x[i] : a * x[i];
  }
}

/// da[c] += sum over n and the channel's elements with x <= 0 of dy x. One
/// block per slope (channels of them; 1 when shared, which then spans the
/// whole blob: num x all_channels x dim), its threads striding over the
/// (n, j) pairs.
__global__ void PReLUSlopeBackwardKernel(int64_t num, int64_t channels, int64_t dim, const float* x,
                                         const float* dy, float* da) {
  __shared__ double shared[kCudaThreads];
  const int64_t per_slope = num * dim;
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    double sum = 0;
    for (int64_t k = threadIdx.x; k < per_slope; k += blockDim.x) {
      const int64_t i = ((k / dim) * channels + c) * dim + k % dim;
      if (x[i] <= 0) sum += static_cast<double>(dy[i]) * x[i];
    }
    sum = BlockSum(sum, shared);
    if (threadIdx.x == 0) da[c] += static_cast<float>(sum);
  }
}

/// dx = dy where x > 0, else a[c] dy.
__global__ void PReLUBackwardKernel(int64_t n, int64_t channels, int64_t dim, const float* slope,
                                    const float* x, const float* dy, float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const float a = slope[(i / dim) % channels];
    dx[i] = x[i] > 0 ? dy[i] : a * dy[i];
  }
}

}  // namespace

// launchers

void PReLULayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  SaveInput(*bottom[0]);
  if (n == 0) return;
  const int64_t channels = channel_shared_ ? 1 : bottom[0]->shape(1);
  PReLUForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, channels, bottom[0]->count(2), blobs_[0]->gpu_data(), bottom[0]->gpu_data(),
      top[0]->mutable_gpu_data());
  CheckLaunch("PReLUForwardKernel");
}

void PReLULayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  // A shared slope sees the whole blob as one channel of num x C*dim.
  const int64_t channels = channel_shared_ ? 1 : bottom[0]->shape(1);
  const int64_t dim = channel_shared_ ? bottom[0]->count(1) : bottom[0]->count(2);
  const int64_t num = bottom[0]->shape(0);
  const float* x = Input(*bottom[0]).gpu_data();
  const float* dy = top[0]->gpu_diff();
  // The slope gradient first: in place, dx overwrites dy.
  if (param_propagate_down(0)) {
    const unsigned int blocks = static_cast<unsigned int>(std::min<int64_t>(channels, 65535));
    PReLUSlopeBackwardKernel<<<blocks, kCudaThreads, 0, CudaStream()>>>(
        num, channels, dim, x, dy, blobs_[0]->mutable_gpu_diff());
    CheckLaunch("PReLUSlopeBackwardKernel");
  }
  if (!propagate_down[0]) return;
  PReLUBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, channels, dim, blobs_[0]->gpu_data(), x, dy, bottom[0]->mutable_gpu_diff());
  CheckLaunch("PReLUBackwardKernel");
}

}  // namespace demi
