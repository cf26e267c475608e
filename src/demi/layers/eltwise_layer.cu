#include "demi/layers/eltwise_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// The first two bottoms: bottom 0 wins only when strictly larger (Caffe's
/// order).
__global__ void MaxFirstPairKernel(int64_t n, const float* a, const float* b, float* y,
                                   float* argmax) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const bool first = a[i] > b[i];
    y[i] = first ? a[i] : b[i];
    argmax[i] = first ? 0.0f : 1.0f;
  }
}

/// Each later bottom k wins only when strictly larger than the running max.
__global__ void MaxUpdateKernel(int64_t n, float k, const float* x, float* y, float* argmax) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    if (x[i] > y[i]) {
      y[i] = x[i];
      argmax[i] = k;
    }
  }
}

/// dx = dy where bottom `k` won, else 0.
__global__ void MaxBackwardKernel(int64_t n, float k, const float* argmax, const float* dy,
                                  float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) dx[i] = argmax[i] == k ? dy[i] : 0.0f;
}

}  // namespace

// launchers

void EltwiseLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t count = top[0]->count();
  float* y = top[0]->mutable_gpu_data();
  switch (op_) {
    case EltwiseParameter::PROD:
      GpuMul(count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), y);
      for (size_t k = 2; k < bottom.size(); ++k) GpuMul(count, y, bottom[k]->gpu_data(), y);
      break;
    case EltwiseParameter::SUM:
      GpuSet(count, 0.0f, y);
      for (size_t k = 0; k < bottom.size(); ++k) {
        GpuAxpy(count, coeffs_[k], bottom[k]->gpu_data(), y);
      }
      break;
    case EltwiseParameter::MAX: {
      if (count == 0) break;
      float* argmax = argmax_.mutable_gpu_data();
      MaxFirstPairKernel<<<CudaBlocks(count), kCudaThreads, 0, CudaStream()>>>(
          count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), y, argmax);
      CheckLaunch("MaxFirstPairKernel");
      for (size_t k = 2; k < bottom.size(); ++k) {
        MaxUpdateKernel<<<CudaBlocks(count), kCudaThreads, 0, CudaStream()>>>(
            count, static_cast<float>(k), bottom[k]->gpu_data(), y, argmax);
        CheckLaunch("MaxUpdateKernel");
      }
      break;
    }
  }
}

void EltwiseLayer::Backward_gpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  const int64_t count = top[0]->count();
  const float* dy = top[0]->gpu_diff();
  for (size_t k = 0; k < bottom.size(); ++k) {
    if (!propagate_down[k]) continue;
    float* dx = bottom[k]->mutable_gpu_diff();
    switch (op_) {
      case EltwiseParameter::PROD:
        if (stable_prod_grad_) {
          // Product of the other bottoms, so a zero in x_k does no harm.
          bool started = false;
          for (size_t j = 0; j < bottom.size(); ++j) {
            if (j == k) continue;
            if (started) {
              GpuMul(count, dx, bottom[j]->gpu_data(), dx);
            } else {
              GpuCopy(count, bottom[j]->gpu_data(), dx);
              started = true;
            }
          }
        } else {
          GpuDiv(count, top[0]->gpu_data(), bottom[k]->gpu_data(), dx);
        }
        GpuMul(count, dx, dy, dx);
        break;
      case EltwiseParameter::SUM:
        GpuCopy(count, dy, dx);
        if (coeffs_[k] != 1.0f) GpuScal(count, coeffs_[k], dx);
        break;
      case EltwiseParameter::MAX:
        if (count == 0) break;
        MaxBackwardKernel<<<CudaBlocks(count), kCudaThreads, 0, CudaStream()>>>(
            count, static_cast<float>(k), argmax_.gpu_data(), dy, dx);
        CheckLaunch("MaxBackwardKernel");
        break;
    }
  }
}

}  // namespace demi
