#include "demi/layers/euclidean_loss_layer.hpp"
#include "demi/layers/loss_kernels.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

/// diff[k]^2, in double.
struct SquareTerm {
  const float* diff;
  __device__ double operator()(int64_t k) const {
    const double d = diff[k];
    return d * d;
  }
};

}  // namespace

// launchers

void EuclideanLossLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  // The loss stays on the device (read at a display or test).
  const int64_t count = bottom[0]->count();
  float* diff = diff_.mutable_gpu_data();
  GpuSub(count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), diff);
  GpuChannelReduce<double>(
      1, 1, count, SquareTerm{diff},
      FinishHalfMean{static_cast<double>(bottom[0]->shape(0)), top[0]->mutable_gpu_data()});
}

void EuclideanLossLayer::Backward_gpu(const std::vector<Blob*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob*>& bottom) {
  const int64_t count = diff_.count();
  if (count == 0) return;
  for (int b = 0; b < 2; ++b) {
    if (!propagate_down[b]) continue;
    GpuScaledLossGradient(count, b == 0 ? 1.0f : -1.0f, top[0]->gpu_diff(), nullptr,
                          static_cast<float>(bottom[0]->shape(0)), diff_.gpu_data(),
                          bottom[b]->mutable_gpu_diff());
  }
}

}  // namespace demi
