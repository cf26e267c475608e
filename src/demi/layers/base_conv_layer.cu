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

void BaseConvolutionLayer::AddBiasGpu(float* top_data) const { AddBiasGpu(FLOAT, false, top_data); }

void BaseConvolutionLayer::AccumulateBiasGradientGpu(const float* top_diff) {
  AccumulateBiasGradientGpu(FLOAT, false, top_diff);
}

void BaseConvolutionLayer::AddBiasGpu(Type type, bool channels_last, void* top_data) const {
  const ChannelAxis a = ChannelAxis::Of(num_, num_output_, top_h_ * top_w_, channels_last);
  const int64_t n = a.outer * a.channels * a.inner;
  if (n == 0) return;
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    Launch("AddBiasKernel", ElementwiseBlocks(n), AddBiasKernel<T>, n, blobs_[1]->gpu_data(),
           a.channel_of(), static_cast<T*>(top_data));
  });
}

void BaseConvolutionLayer::AccumulateBiasGradientGpu(Type type, bool channels_last,
                                                     const void* top_diff) {
  const ChannelAxis a = ChannelAxis::Of(num_, num_output_, top_h_ * top_w_, channels_last);
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    GpuChannelSums(a.outer, a.channels, a.inner, true,
                   StoredGradientTerm<T>{static_cast<const T*>(top_diff), nullptr},
                   blobs_[1]->mutable_gpu_diff());
  });
}

}  // namespace demi
