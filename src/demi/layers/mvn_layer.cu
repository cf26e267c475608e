#include "demi/layers/mvn_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// One block per slice. Every sum over the slice is complete before any
/// output is written, and each thread writes only the elements it read, so
/// the layer may run in place.
__global__ void MVNForwardKernel(int64_t num, int64_t dim, bool normalize_variance, float eps,
                                 const float* x, float* y, float* std_dev) {
  __shared__ double shared[kCudaThreads];
  for (int64_t i = blockIdx.x; i < num; i += gridDim.x) {
    const float* in = x + i * dim;
    float* out = y + i * dim;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) sum += in[j];
    const double mean = BlockSum(sum, shared) / static_cast<double>(dim);
    if (!normalize_variance) {
      for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
        out[j] = static_cast<float>(in[j] - mean);
      }
      continue;
    }
    double sumsq = 0;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
      sumsq += (in[j] - mean) * (in[j] - mean);
    }
    const double s = sqrt(BlockSum(sumsq, shared) / static_cast<double>(dim));
    if (threadIdx.x == 0) std_dev[i] = static_cast<float>(s);
    const double d = s + eps;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
      out[j] = static_cast<float>((in[j] - mean) / d);
    }
  }
}

/// One block per slice, in place as Forward: dx = (dy - mean(dy)) / (std +
/// eps) - y mean(dy y) / std, or dy - mean(dy).
__global__ void MVNBackwardKernel(int64_t num, int64_t dim, bool normalize_variance, float eps,
                                  const float* y, const float* std_dev, const float* dy,
                                  float* dx) {
  __shared__ double shared[kCudaThreads];
  for (int64_t i = blockIdx.x; i < num; i += gridDim.x) {
    const float* g = dy + i * dim;
    float* out = dx + i * dim;
    double sum_g = 0;
    double sum_gy = 0;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
      sum_g += g[j];
      if (normalize_variance) sum_gy += static_cast<double>(g[j]) * y[i * dim + j];
    }
    const double mean_g = BlockSum(sum_g, shared) / static_cast<double>(dim);
    if (!normalize_variance) {
      for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
        out[j] = static_cast<float>(g[j] - mean_g);
      }
      continue;
    }
    sum_gy = BlockSum(sum_gy, shared);
    const double s = std_dev[i];
    const double d = s + eps;
    // d std / dx is (x - mean) / (dim std): no gradient term when std is 0.
    const double mean_gy_over_s = s > 0 ? sum_gy / static_cast<double>(dim) / s : 0.0;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
      out[j] = static_cast<float>((g[j] - mean_g) / d - y[i * dim + j] * mean_gy_over_s);
    }
  }
}

}  // namespace

// launchers

void MVNLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (num_ == 0) return;
  const MVNParameter& param = layer_param_.mvn_param();
  Launch("MVNForwardKernel", BlockPerItem(num_), MVNForwardKernel, num_, dim_,
         param.normalize_variance(), param.eps(), bottom[0]->gpu_data(), top[0]->mutable_gpu_data(),
         param.normalize_variance() ? std_.mutable_gpu_data() : nullptr);
}

void MVNLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  if (!propagate_down[0] || num_ == 0) return;
  const MVNParameter& param = layer_param_.mvn_param();
  const bool normalize_variance = param.normalize_variance();
  Launch("MVNBackwardKernel", BlockPerItem(num_), MVNBackwardKernel, num_, dim_, normalize_variance,
         param.eps(), normalize_variance ? top[0]->gpu_data() : nullptr,
         normalize_variance ? std_.gpu_data() : nullptr, top[0]->gpu_diff(),
         bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
