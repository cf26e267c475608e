#include "demi/layers/absval_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// dx = sign(x) dy, 0 at x = 0.
__global__ void AbsValBackwardKernel(int64_t n, const float* x, const float* dy, float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    dx[i] = x[i] > 0 ? dy[i] : (x[i] < 0 ? -dy[i] : 0.0f);
  }
}

}  // namespace

// launchers

void AbsValLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t count = bottom[0]->count();
  if (in_place_ && runs_backward()) {
    GpuCopy(count, bottom[0]->gpu_data(), bottom_copy_.mutable_gpu_data());
  }
  GpuAbs(count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

void AbsValLayer::Backward_gpu(const std::vector<Blob*>& top,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
  const float* x = in_place_ ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
  AbsValBackwardKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(
      n, x, top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CheckLaunch("AbsValBackwardKernel");
}

}  // namespace demi
