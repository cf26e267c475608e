#include "demi/layers/base_conv_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

// kernels

/// y[n, m, s] += b[m] over all images of one top, stored in T (the sum in
/// float, rounded once).
template <typename T>
__global__ void AddBiasKernel(int64_t n, const float* bias, ChannelOf channel_of, T* top) {
  ElementwiseStore(n, top, [=](int64_t i) { return Widen(top[i]) + bias[channel_of(i)]; });
}

}  // namespace

// launchers

void BaseConvolutionLayer::AddBiasGpu(float* top_data) const { AddBiasGpu(FLOAT, top_data); }

void BaseConvolutionLayer::AccumulateBiasGradientGpu(const float* top_diff) {
  AccumulateBiasGradientGpu(FLOAT, top_diff);
}

void BaseConvolutionLayer::AddBiasGpu(Type type, void* top_data) const {
  const int64_t spatial = top_h_ * top_w_;
  const int64_t n = num_ * num_output_ * spatial;
  if (n == 0) return;
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    Launch("AddBiasKernel", ElementwiseBlocks(n), AddBiasKernel<T>, n, blobs_[1]->gpu_data(),
           ChannelOf(spatial, num_output_), static_cast<T*>(top_data));
  });
}

void BaseConvolutionLayer::AccumulateBiasGradientGpu(Type type, const void* top_diff) {
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    GpuChannelSums(num_, num_output_, top_h_ * top_w_, true,
                   StoredGradientTerm<T>{static_cast<const T*>(top_diff), nullptr},
                   blobs_[1]->mutable_gpu_diff());
  });
}

}  // namespace demi
