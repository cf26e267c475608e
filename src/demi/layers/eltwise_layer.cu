#include "demi/layers/eltwise_layer.hpp"
#include "demi/util/convert_gpu.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"
#include "demi/util/stored_types.cuh"

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

/// y = c0 a + c1 b in one pass: the first two bottoms of a SUM, stored in
/// T. Rounds as zeroing y and adding each term by axpy (cuBLAS's fused
/// multiply-add) would, then once more to T.
template <typename T>
__global__ void SumPairKernel(int64_t n, float c0, const T* a, float c1, const T* b, T* y) {
  ElementwiseStore(n, y, [=](int64_t i) { return fmaf(c1, Widen(b[i]), c0 * Widen(a[i])); });
}

/// y += c x, stored in T (the later bottoms of a SUM).
template <typename T>
__global__ void StoredAxpyKernel(int64_t n, float c, const T* x, T* y) {
  ElementwiseStore(n, y, [=](int64_t i) { return fmaf(c, Widen(x[i]), Widen(y[i])); });
}

/// dx = c dy, stored in T (SUM's backward).
template <typename T>
__global__ void StoredScaleKernel(int64_t n, float c, const T* dy, T* dx) {
  ElementwiseStore(n, dx, [=](int64_t i) { return c * Widen(dy[i]); });
}

/// dx = dy where bottom `k` won, else 0.
__global__ void MaxBackwardKernel(int64_t n, float k, const float* argmax, const float* dy,
                                  float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) dx[i] = argmax[i] == k ? dy[i] : 0.0f;
}

}  // namespace

// launchers

void EltwiseLayer::SumStoredGpu(const std::vector<Blob*>& bottom, Blob* top) const {
  const int64_t count = top->count();
  if (count == 0) return;
  VisitStorageType(top->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    T* y = MutableGpuDataAs<T>(top);
    Launch("SumPairKernel", ElementwiseBlocks(count), SumPairKernel<T>, count, coeffs_[0],
           GpuDataAs<T>(*bottom[0]), coeffs_[1], GpuDataAs<T>(*bottom[1]), y);
    for (size_t k = 2; k < bottom.size(); ++k) {
      Launch("StoredAxpyKernel", ElementwiseBlocks(count), StoredAxpyKernel<T>, count, coeffs_[k],
             GpuDataAs<T>(*bottom[k]), y);
    }
  });
}

void EltwiseLayer::SumBackwardStoredGpu(const Blob& top, const std::vector<bool>& propagate_down,
                                        const std::vector<Blob*>& bottom) const {
  const int64_t count = top.count();
  const Type type = top.storage_type();
  for (size_t k = 0; k < bottom.size(); ++k) {
    if (!propagate_down[k]) continue;
    void* dx = bottom[k]->diff()->mutable_gpu_data();
    if (coeffs_[k] == 1.0f) {
      GpuConvert(count, type, top.diff()->gpu_data(), type, dx);
      continue;
    }
    if (count == 0) continue;
    VisitStorageType(type, [&](auto tag) {
      using T = decltype(tag);
      Launch("StoredScaleKernel", ElementwiseBlocks(count), StoredScaleKernel<T>, count, coeffs_[k],
             GpuDiffAs<T>(top), static_cast<T*>(dx));
    });
  }
}

void EltwiseLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (top[0]->storage_type() != FLOAT) return SumStoredGpu(bottom, top[0]);
  const int64_t count = top[0]->count();
  if (op_ == EltwiseParameter::SUM && count > 0) {
    // One pass for the first pair instead of zeroing y and two axpys.
    float* y = top[0]->mutable_gpu_data();
    Launch("SumPairKernel", ElementwiseBlocks(count), SumPairKernel<float>, count, coeffs_[0],
           bottom[0]->gpu_data(), coeffs_[1], bottom[1]->gpu_data(), y);
    for (size_t k = 2; k < bottom.size(); ++k) GpuAxpy(count, coeffs_[k], bottom[k]->gpu_data(), y);
    return;
  }
  if (op_ != EltwiseParameter::MAX) {
    ForwardByMath(Device::kGPU, bottom, top[0]);
    return;
  }
  if (count == 0) return;
  float* y = top[0]->mutable_gpu_data();
  float* argmax = argmax_.mutable_gpu_data();
  Launch("MaxFirstPairKernel", CudaBlocks(count), MaxFirstPairKernel, count, bottom[0]->gpu_data(),
         bottom[1]->gpu_data(), y, argmax);
  for (size_t k = 2; k < bottom.size(); ++k) {
    Launch("MaxUpdateKernel", CudaBlocks(count), MaxUpdateKernel, count, static_cast<float>(k),
           bottom[k]->gpu_data(), y, argmax);
  }
}

void EltwiseLayer::Backward_gpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  if (top[0]->storage_type() != FLOAT) return SumBackwardStoredGpu(*top[0], propagate_down, bottom);
  if (op_ != EltwiseParameter::MAX) {
    BackwardByMath(Device::kGPU, *top[0], propagate_down, bottom);
    return;
  }
  const int64_t count = top[0]->count();
  const float* dy = top[0]->gpu_diff();
  for (size_t k = 0; k < bottom.size(); ++k) {
    if (!propagate_down[k] || count == 0) continue;
    Launch("MaxBackwardKernel", CudaBlocks(count), MaxBackwardKernel, count, static_cast<float>(k),
           argmax_.gpu_data(), dy, bottom[k]->mutable_gpu_diff());
  }
}

}  // namespace demi
