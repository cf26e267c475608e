#include "demi/layers/power_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

__global__ void PowerForwardKernel(int64_t n, float power, float scale, float shift, const float* x,
                                   float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) y[i] = powf(shift + scale * x[i], power);
}

/// dx = power scale dy, where that derivative is a constant.
__global__ void PowerConstantBackwardKernel(int64_t n, float diff_scale, const float* dy,
                                            float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) dx[i] = diff_scale * dy[i];
}

/// dx = dy power scale (shift + scale x)^(power - 1).
__global__ void PowerBackwardKernel(int64_t n, float power, float scale, float shift,
                                    const float* x, const float* dy, float* dx) {
  const float diff_scale = power * scale;
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    dx[i] = dy[i] * diff_scale * powf(shift + scale * x[i], power - 1.0f);
  }
}

}  // namespace

// launchers

void PowerLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const PowerParameter& param = layer_param_.power_param();
  const int64_t n = bottom[0]->count();
  if (in_place_ && !ConstantDerivative() && runs_backward()) {
    GpuCopy(n, bottom[0]->gpu_data(), bottom_copy_.mutable_gpu_data());
  }
  if (n == 0) return;
  Launch("PowerForwardKernel", CudaBlocks(n), PowerForwardKernel, n, param.power(), param.scale(),
         param.shift(), bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

void PowerLayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
  const PowerParameter& param = layer_param_.power_param();
  if (ConstantDerivative()) {
    Launch("PowerConstantBackwardKernel", CudaBlocks(n), PowerConstantBackwardKernel, n,
           param.power() * param.scale(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
    return;
  }
  const float* x = in_place_ ? bottom_copy_.gpu_data() : bottom[0]->gpu_data();
  Launch("PowerBackwardKernel", CudaBlocks(n), PowerBackwardKernel, n, param.power(), param.scale(),
         param.shift(), x, top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
