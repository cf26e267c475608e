#include "demi/layers/bias_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// y[o, d, j] = x[o, d, j] + b[d]; in place works.
__global__ void BiasForwardKernel(int64_t n, ChannelOf channel_of, const float* x, const float* b,
                                  float* y) {
  ElementwiseInto(n, y, [=](int64_t i) { return x[i] + b[channel_of(i)]; });
}

}  // namespace

// launchers

void BiasLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = top[0]->count();
  if (n == 0) return;
  const float* b = (bottom.size() == 2 ? bottom[1] : blobs_[0].get())->gpu_data();
  Launch("BiasForwardKernel", ElementwiseBlocks(n), BiasForwardKernel, n,
         ChannelOf(inner_, bias_dim_), bottom[0]->gpu_data(), b, top[0]->mutable_gpu_data());
}

void BiasLayer::SumPerBiasGpu(const float* dy, bool accumulate, float* db) const {
  GpuChannelSums(outer_, bias_dim_, inner_, accumulate, GradientTerm{dy, nullptr}, db);
}

}  // namespace demi
