#include "demi/layers/log_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// In double, as on the CPU.
__global__ void LogForwardKernel(int64_t n, float scale, float shift, double log_base,
                                 const float* x, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    y[i] = static_cast<float>(log(static_cast<double>(shift + scale * x[i])) / log_base);
  }
}

/// 1 / (shift + scale x) = base^-y = exp(-y ln(base)), read from the top.
__global__ void LogBackwardKernel(int64_t n, double factor, double log_base, const float* y,
                                  const float* dy, float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    dx[i] = static_cast<float>(dy[i] * factor * exp(-y[i] * log_base));
  }
}

}  // namespace

// launchers

void LogLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  const LogParameter& param = layer_param_.log_param();
  Launch("LogForwardKernel", CudaBlocks(n), LogForwardKernel, n, param.scale(), param.shift(),
         log_base_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

void LogLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                            const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
  const double factor = layer_param_.log_param().scale() / log_base_;
  Launch("LogBackwardKernel", CudaBlocks(n), LogBackwardKernel, n, factor, log_base_,
         top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
