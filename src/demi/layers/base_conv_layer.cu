#include "demi/layers/base_conv_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// y[n, m, s] += b[m] over all images of one top.
__global__ void AddBiasKernel(int64_t n, const float* bias, ChannelOf channel_of, float* top) {
  ElementwiseInto(n, top, [=](int64_t i) { return top[i] + bias[channel_of(i)]; });
}

}  // namespace

// launchers

void BaseConvolutionLayer::AddBiasGpu(float* top_data) const {
  const int64_t spatial = top_h_ * top_w_;
  const int64_t n = num_ * num_output_ * spatial;
  if (n == 0) return;
  Launch("AddBiasKernel", ElementwiseBlocks(n), AddBiasKernel, n, blobs_[1]->gpu_data(),
         ChannelOf(spatial, num_output_), top_data);
}

void BaseConvolutionLayer::AccumulateBiasGradientGpu(const float* top_diff) {
  GpuChannelSums(num_, num_output_, top_h_ * top_w_, true, GradientTerm{top_diff, nullptr},
                 blobs_[1]->mutable_gpu_diff());
}

}  // namespace demi
