#include <limits>

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

cudaDataType_t CublasType(Type type) {
  CHECK(type == FLOAT || type == FLOAT16 || type == BFLOAT16)
      << "cuBLAS matrices are stored in FLOAT, FLOAT16 or BFLOAT16 here";
  return type == FLOAT16 ? CUDA_R_16F : type == BFLOAT16 ? CUDA_R_16BF : CUDA_R_32F;
}

int GemmInt(int64_t value) {
  CHECK(value >= 0 && value <= std::numeric_limits<int>::max())
      << "a matrix dimension of " << value << " does not fit cuBLAS's int";
  return static_cast<int>(value);
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

void GpuGemmStored(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                   Type ab_type, const void* a, const void* b, float beta, Type c_type, void* c) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const int lda = GemmInt(trans_a ? m : k);
  const int ldb = GemmInt(trans_b ? k : n);
  DEMI_CUBLAS_CHECK(cublasGemmEx(CublasHandle(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                 trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, GemmInt(n), GemmInt(m),
                                 GemmInt(k), &alpha, b, CublasType(ab_type), ldb, a,
                                 CublasType(ab_type), lda, &beta, c, CublasType(c_type), GemmInt(n),
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace demi
