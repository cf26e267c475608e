#include "demi/layers/base_conv_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

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

void BaseConvolutionLayer::ForwardGemmGpu(const float* image, const float* weights, float* output,
                                          bool columns_ready) {
  const float* col = image;
  if (!is_1x1_) {
    if (!columns_ready) GpuIm2col(image, geometry_, columns_.mutable_gpu_data());
    col = columns_.gpu_data();
  }
  const int64_t out_per_group = conv_out_channels_ / group_;
  for (int64_t g = 0; g < group_; ++g) {
    GpuGemm(false, false, out_per_group, output_spatial_, kernel_dim_, 1.0f,
            weights + g * out_per_group * kernel_dim_, col + g * kernel_dim_ * output_spatial_,
            0.0f, output + g * out_per_group * output_spatial_);
  }
}

void BaseConvolutionLayer::BackwardGemmGpu(const float* output, const float* weights,
                                           float* image) {
  float* col = is_1x1_ ? image : columns_.mutable_gpu_data();
  const int64_t out_per_group = conv_out_channels_ / group_;
  for (int64_t g = 0; g < group_; ++g) {
    GpuGemm(true, false, kernel_dim_, output_spatial_, out_per_group, 1.0f,
            weights + g * out_per_group * kernel_dim_, output + g * out_per_group * output_spatial_,
            0.0f, col + g * kernel_dim_ * output_spatial_);
  }
  if (!is_1x1_) GpuCol2im(col, geometry_, image);
}

void BaseConvolutionLayer::WeightGemmGpu(const float* image, const float* output,
                                         float* weights_diff) {
  const float* col = image;
  if (!is_1x1_) {
    GpuIm2col(image, geometry_, columns_.mutable_gpu_data());
    col = columns_.gpu_data();
  }
  const int64_t out_per_group = conv_out_channels_ / group_;
  for (int64_t g = 0; g < group_; ++g) {
    GpuGemm(false, true, out_per_group, kernel_dim_, output_spatial_, 1.0f,
            output + g * out_per_group * output_spatial_, col + g * kernel_dim_ * output_spatial_,
            1.0f, weights_diff + g * out_per_group * kernel_dim_);
  }
}

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
