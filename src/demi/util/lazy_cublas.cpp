// The cuBLAS functions Demitasse calls, loaded from libcublas on first use
// (see util/cuda_libraries.hpp). cublas_v2.h maps most names to their _v2
// symbols; the macro spells the mapped name.
#ifndef CPU_ONLY

#include <cublas_v2.h>

#include "demi/util/cuda_libraries.hpp"

namespace {

const demi::LazyLibrary kCublas = {
    "cuBLAS", "libcublas.so." DEMI_LAZY_STRING(CUBLAS_VER_MAJOR),
    "running on a GPU (CPU runs need no CUDA library)",
    "cuBLAS of the CUDA " DEMI_LAZY_STRING(CUBLAS_VER_MAJOR) " toolkit: NVIDIA's package "
    "libcublas-" DEMI_LAZY_STRING(CUBLAS_VER_MAJOR) "-<minor>"};

}  // namespace

// clang-format off
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasCreate, (cublasHandle_t* handle), (handle))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasDestroy, (cublasHandle_t handle), (handle))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasSetStream,
                   (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasSetMathMode,
                   (cublasHandle_t handle, cublasMath_t mode), (handle, mode))
DEMI_LAZY_FUNCTION(kCublas, const char*, cublasGetStatusString, (cublasStatus_t status), (status))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasSgemm,
                   (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int m, int n, int k, const float* alpha, const float* A, int lda,
                    const float* B, int ldb, const float* beta, float* C, int ldc),
                   (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasGemmEx,
                   (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int m, int n, int k, const void* alpha, const void* A, cudaDataType_t Atype,
                    int lda, const void* B, cudaDataType_t Btype, int ldb, const void* beta,
                    void* C, cudaDataType_t Ctype, int ldc, cublasComputeType_t computeType,
                    cublasGemmAlgo_t algo),
                   (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta,
                    C, Ctype, ldc, computeType, algo))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasSgemv,
                   (cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                    const float* alpha, const float* A, int lda, const float* x, int incx,
                    const float* beta, float* y, int incy),
                   (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasSaxpy,
                   (cublasHandle_t handle, int n, const float* alpha, const float* x, int incx,
                    float* y, int incy),
                   (handle, n, alpha, x, incx, y, incy))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasSscal,
                   (cublasHandle_t handle, int n, const float* alpha, float* x, int incx),
                   (handle, n, alpha, x, incx))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasSdot,
                   (cublasHandle_t handle, int n, const float* x, int incx, const float* y,
                    int incy, float* result),
                   (handle, n, x, incx, y, incy, result))
DEMI_LAZY_FUNCTION(kCublas, cublasStatus_t, cublasSasum,
                   (cublasHandle_t handle, int n, const float* x, int incx, float* result),
                   (handle, n, x, incx, result))
// clang-format on

#endif  // CPU_ONLY
