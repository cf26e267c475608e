#include "demi/layers/euclidean_loss_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// y = alpha * x (written, so stale values in y never matter).
__global__ void ScaleKernel(int64_t n, float alpha, const float* x, float* y) {
  for (int64_t k = GridStart(); k < n; k += GridStride()) y[k] = alpha * x[k];
}

}  // namespace

// launchers

void EuclideanLossLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  const int64_t count = bottom[0]->count();
  float* diff = diff_.mutable_gpu_data();
  GpuSub(count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), diff);
  const double sumsq = GpuDot(count, diff, diff);  // cuBLAS: a fixed order
  top[0]->mutable_cpu_data()[0] =
      static_cast<float>(sumsq / static_cast<double>(bottom[0]->shape(0)) / 2.0);
}

void EuclideanLossLayer::Backward_gpu(const std::vector<Blob*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob*>& bottom) {
  const int64_t count = diff_.count();
  if (count == 0) return;
  for (int b = 0; b < 2; ++b) {
    if (!propagate_down[b]) continue;
    const float sign = b == 0 ? 1.0f : -1.0f;
    const float alpha = sign * top[0]->cpu_diff()[0] / static_cast<float>(bottom[0]->shape(0));
    Launch("ScaleKernel", CudaBlocks(count), ScaleKernel, count, alpha, diff_.gpu_data(),
           bottom[b]->mutable_gpu_diff());
  }
}

}  // namespace demi
