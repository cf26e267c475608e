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

}  // namespace

// launchers

void BaseConvolutionLayer::AddBiasGpu(float* top_data) const {
  const int64_t spatial = top_h_ * top_w_;
  const int64_t n = num_ * num_output_ * spatial;
  if (n == 0) return;
  Launch("AddBiasKernel", CudaBlocks(n), AddBiasKernel, n, blobs_[1]->gpu_data(), num_output_,
         spatial, top_data);
}

void BaseConvolutionLayer::AccumulateBiasGradientGpu(const float* top_diff) {
  GpuChannelSums(num_, num_output_, top_h_ * top_w_, true, GradientTerm{top_diff, nullptr},
                 blobs_[1]->mutable_gpu_diff());
}

}  // namespace demi
