#include "demi/blob.hpp"
#include "demi/util/convert_gpu.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

// kernels

template <typename From, typename To>
__global__ void ConvertKernel(int64_t n, const From* x, To* y) {
  ElementwiseLoop(
      n, [=](int64_t i) { return Widen(x[i]); },
      [=](int64_t i, float value) { y[i] = Narrow<To>(value); });
}

template <typename T>
__global__ void AddWidenedKernel(int64_t n, const T* x, float* y) {
  ElementwiseInto(n, y, [=](int64_t i) { return y[i] + Widen(x[i]); });
}

}  // namespace

// launchers

void GpuConvert(int64_t n, Type from, const void* x, Type to, void* y) {
  if (n == 0) return;
  if (from == to) {
    const size_t bytes = static_cast<size_t>(n) * (from == FLOAT ? sizeof(float) : 2);
    DEMI_CUDA_CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, CudaStream()));
    return;
  }
  VisitStorageType(from, [&](auto from_tag) {
    VisitStorageType(to, [&](auto to_tag) {
      using From = decltype(from_tag);
      using To = decltype(to_tag);
      Launch("ConvertKernel", ElementwiseBlocks(n), ConvertKernel<From, To>, n,
             static_cast<const From*>(x), static_cast<To*>(y));
    });
  });
}

void GpuAddWidened(int64_t n, Type type, const void* x, float* y) {
  if (n == 0) return;
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    Launch("AddWidenedKernel", ElementwiseBlocks(n), AddWidenedKernel<T>, n,
           static_cast<const T*>(x), y);
  });
}

}  // namespace demi
