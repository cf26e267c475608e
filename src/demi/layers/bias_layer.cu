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

}  // namespace

// launchers

void BiasLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = top[0]->count();
  if (n == 0) return;
  const float* b = (bottom.size() == 2 ? bottom[1] : blobs_[0].get())->gpu_data();
  Launch("BiasForwardKernel", CudaBlocks(n), BiasForwardKernel, n, bias_dim_, inner_,
         bottom[0]->gpu_data(), b, top[0]->mutable_gpu_data());
}

void BiasLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  const float* dy = top[0]->gpu_diff();
  if (propagate_down[0]) GpuCopy(top[0]->count(), dy, bottom[0]->mutable_gpu_diff());
  const bool bias_is_param = bottom.size() == 1;
  if (bias_is_param ? !param_propagate_down(0) : !propagate_down[1]) return;
  // A param gradient accumulates; bottom 1's gradient is written.
  float* db = (bias_is_param ? blobs_[0].get() : bottom[1])->mutable_gpu_diff();
  ChannelSums(outer_, bias_dim_, inner_, bias_is_param, GradientTerm{dy, nullptr}, db);
}

}  // namespace demi
