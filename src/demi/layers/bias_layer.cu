#include <algorithm>

#include "demi/layers/bias_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// y[o, d, j] = x[o, d, j] + b[d]; in place works.
__global__ void BiasForwardKernel(int64_t n, int64_t bias_dim, int64_t inner, const float* x,
                                  const float* b, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = x[i] + b[(i / inner) % bias_dim];
}

/// db[d] (+)= the sum of dy[o, d, j] over o and j: one block per d, its
/// threads striding over the (o, j) pairs. `accumulate` adds to db (a param
/// gradient) instead of writing it (bottom 1's).
__global__ void BiasBackwardKernel(int64_t outer, int64_t bias_dim, int64_t inner, bool accumulate,
                                   const float* dy, float* db) {
  __shared__ double shared[kCudaThreads];
  const int64_t per_bias = outer * inner;
  for (int64_t d = blockIdx.x; d < bias_dim; d += gridDim.x) {
    double sum = 0;
    for (int64_t k = threadIdx.x; k < per_bias; k += blockDim.x) {
      sum += dy[((k / inner) * bias_dim + d) * inner + k % inner];
    }
    sum = BlockSum(sum, shared);
    if (threadIdx.x == 0) db[d] = static_cast<float>(sum) + (accumulate ? db[d] : 0.0f);
  }
}

}  // namespace

// launchers

void BiasLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = top[0]->count();
  if (n == 0) return;
  const float* b = (bottom.size() == 2 ? bottom[1] : blobs_[0].get())->gpu_data();
  BiasForwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, bias_dim_, inner_, bottom[0]->gpu_data(), b, top[0]->mutable_gpu_data());
  CheckLaunch("BiasForwardKernel");
}

void BiasLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  const float* dy = top[0]->gpu_diff();
  if (propagate_down[0]) GpuCopy(top[0]->count(), dy, bottom[0]->mutable_gpu_diff());
  const bool bias_is_param = bottom.size() == 1;
  if (bias_is_param ? !param_propagate_down(0) : !propagate_down[1]) return;
  if (bias_dim_ == 0) return;
  // A param gradient accumulates; bottom 1's gradient is written.
  float* db = (bias_is_param ? blobs_[0].get() : bottom[1])->mutable_gpu_diff();
  const unsigned int blocks = static_cast<unsigned int>(std::min<int64_t>(bias_dim_, 65535));
  BiasBackwardKernel<<<blocks, kCudaThreads, 0, CudaStream()>>>(outer_, bias_dim_, inner_,
                                                                bias_is_param, dy, db);
  CheckLaunch("BiasBackwardKernel");
}

}  // namespace demi
