#include "demi/layers/inner_product_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// y[row, j] += b[j] for every row of the M x N top.
__global__ void AddBiasRowsKernel(int64_t count, const float* bias, int64_t n, float* y) {
  for (int64_t i = GridStart(); i < count; i += GridStride()) y[i] += bias[i % n];
}

/// One thread per output j: db[j] += dy[row, j], row by row as the CPU does.
__global__ void BiasGradientKernel(int64_t n, const float* dy, int64_t m, float* bias_diff) {
  for (int64_t j = GridStart(); j < n; j += GridStride()) {
    float sum = bias_diff[j];
    for (int64_t row = 0; row < m; ++row) sum += dy[row * n + j];
    bias_diff[j] = sum;
  }
}

}  // namespace

// launchers

void InnerProductLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                    const std::vector<Blob*>& top) {
  float* y = top[0]->mutable_gpu_data();
  GpuGemm(false, !transpose_, m_, n_, k_, 1.0f, bottom[0]->gpu_data(), blobs_[0]->gpu_data(), 0.0f,
          y);
  const int64_t count = m_ * n_;
  if (bias_term_ && count > 0) {
    AddBiasRowsKernel<<<CudaBlocks(count), kCudaThreads, 0, CudaStream()>>>(
        count, blobs_[1]->gpu_data(), n_, y);
    CheckLaunch("AddBiasRowsKernel");
  }
}

void InnerProductLayer::Backward_gpu(const std::vector<Blob*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob*>& bottom) {
  const float* dy = top[0]->gpu_diff();
  if (param_propagate_down(0)) {
    const float* x = bottom[0]->gpu_data();
    float* dw = blobs_[0]->mutable_gpu_diff();
    if (transpose_) {
      GpuGemm(true, false, k_, n_, m_, 1.0f, x, dy, 1.0f, dw);  // dW (K x N) += x^T dy
    } else {
      GpuGemm(true, false, n_, k_, m_, 1.0f, dy, x, 1.0f, dw);  // dW (N x K) += dy^T x
    }
  }
  if (bias_term_ && param_propagate_down(1) && n_ > 0) {
    BiasGradientKernel<<<CudaBlocks(n_), kCudaThreads, 0, CudaStream()>>>(
        n_, dy, m_, blobs_[1]->mutable_gpu_diff());
    CheckLaunch("BiasGradientKernel");
  }
  if (propagate_down[0]) {
    GpuGemm(false, transpose_, m_, k_, n_, 1.0f, dy, blobs_[0]->gpu_data(), 0.0f,
            bottom[0]->mutable_gpu_diff());
  }
}

}  // namespace demi
