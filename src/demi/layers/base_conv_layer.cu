#include "demi/layers/base_conv_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// y[n, m, s] += b[m] over all images of one top.
__global__ void AddBiasKernel(int64_t n, const float* bias, int64_t channels, int64_t spatial,
                              float* top) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) top[i] += bias[i / spatial % channels];
}

/// One block per channel m: db[m] += the sum of dy over all images and
/// positions of channel m, accumulated in double and reduced in a fixed tree,
/// so the result is the same every run.
__global__ void BiasGradientKernel(const float* top_diff, int64_t num, int64_t channels,
                                   int64_t spatial, float* bias_diff) {
  __shared__ double partial[kCudaThreads];
  const int64_t per_channel = num * spatial;
  for (int64_t m = blockIdx.x; m < channels; m += gridDim.x) {
    double sum = 0;
    for (int64_t j = threadIdx.x; j < per_channel; j += blockDim.x) {
      sum += top_diff[(j / spatial * channels + m) * spatial + j % spatial];
    }
    const double total = BlockSum(sum, partial);
    if (threadIdx.x == 0) bias_diff[m] += static_cast<float>(total);
  }
}

}  // namespace

// launchers

void BaseConvolutionLayer::AddBiasGpu(float* top_data) const {
  const int64_t spatial = top_h_ * top_w_;
  const int64_t n = num_ * num_output_ * spatial;
  if (n == 0) return;
  AddBiasKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, blobs_[1]->gpu_data(),
                                                                  num_output_, spatial, top_data);
  CheckLaunch("AddBiasKernel");
}

void BaseConvolutionLayer::AccumulateBiasGradientGpu(const float* top_diff) {
  if (num_output_ == 0) return;
  const unsigned int blocks = static_cast<unsigned int>(num_output_ < 65535 ? num_output_ : 65535);
  BiasGradientKernel<<<blocks, kCudaThreads, 0, CudaStream()>>>(
      top_diff, num_, num_output_, top_h_ * top_w_, blobs_[1]->mutable_gpu_diff());
  CheckLaunch("BiasGradientKernel");
}

}  // namespace demi
