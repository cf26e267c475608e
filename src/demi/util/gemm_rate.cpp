#include "demi/util/gemm_rate.hpp"

#include <cstring>
#include <functional>

#include "demi/common.hpp"

#ifndef CPU_ONLY
#include <library_types.h>

#include "demi/util/bfloat16.hpp"
#include "demi/util/cuda.hpp"
#include "demi/util/float16.hpp"
#endif

namespace demi {

#ifdef CPU_ONLY

std::vector<GemmRate> MeasureGemmRates(int64_t, int, int) {
  ThrowError("the GEMM rate is a GPU measurement; this build is CPU_ONLY");
}

#else

namespace {

/// n x n values in [-1, 1) from a fixed linear congruential sequence: random
/// enough that the tensor cores see no zeros (which run faster than data).
std::vector<float> RandomSquare(int64_t n) {
  std::vector<float> values(n * n);
  uint32_t state = 1701;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return values;
}

/// `values` in the element type `T` (float, float16 or bfloat16) on the GPU.
template <typename T>
void* ToDevice(const std::vector<float>& values) {
  std::vector<T> typed(values.begin(), values.end());
  void* device = nullptr;
  DEMI_CUDA_CHECK(cudaMalloc(&device, typed.size() * sizeof(T)));
  DEMI_CUDA_CHECK(
      cudaMemcpy(device, typed.data(), typed.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

/// The mean device milliseconds of `product` over `repeats` runs after
/// `warmup`.
double TimeProduct(const std::function<void()>& product, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) product();
  cudaEvent_t begin, end;
  DEMI_CUDA_CHECK(cudaEventCreate(&begin));
  DEMI_CUDA_CHECK(cudaEventCreate(&end));
  DEMI_CUDA_CHECK(cudaEventRecord(begin, CudaStream()));
  for (int i = 0; i < repeats; ++i) product();
  DEMI_CUDA_CHECK(cudaEventRecord(end, CudaStream()));
  DEMI_CUDA_CHECK(cudaEventSynchronize(end));
  float ms = 0;
  DEMI_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
  DEMI_CUDA_CHECK(cudaEventDestroy(begin));
  DEMI_CUDA_CHECK(cudaEventDestroy(end));
  return ms / repeats;
}

}  // namespace

std::vector<GemmRate> MeasureGemmRates(int64_t n, int warmup, int repeats) {
  DEMI_CHECK(n > 0 && n <= 32768 && warmup >= 0 && repeats > 0, "GEMM rate: size ", n,
             " (1..32768) and ", repeats, " timed runs (> 0)");
  const std::vector<float> host = RandomSquare(n);
  const int dim = static_cast<int>(n);
  const float alpha = 1.0f, beta = 0.0f;
  cublasHandle_t handle = CublasHandle();
  std::vector<GemmRate> rates;
  auto record = [&](const char* precision, double ms) {
    rates.push_back({precision, n, ms, 2.0 * static_cast<double>(n) * n * n / (ms * 1e9)});
  };
  {
    void* a = ToDevice<float>(host);
    void* c = nullptr;
    DEMI_CUDA_CHECK(cudaMalloc(&c, n * n * sizeof(float)));
    const auto* x = static_cast<const float*>(a);
    auto sgemm = [&] {
      DEMI_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &alpha, x, dim,
                                    x, dim, &beta, static_cast<float*>(c), dim));
    };
    DEMI_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    record("FP32", TimeProduct(sgemm, warmup, repeats));
    DEMI_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH));
    record("TF32", TimeProduct(sgemm, warmup, repeats));
    DEMI_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    DEMI_CUDA_CHECK(cudaFree(a));
    DEMI_CUDA_CHECK(cudaFree(c));
  }
  // 16-bit inputs and output, fp32 sums: what a 16-bit layer's product runs.
  auto half_rate = [&](const char* precision, void* a, cudaDataType_t type) {
    void* c = nullptr;
    DEMI_CUDA_CHECK(cudaMalloc(&c, n * n * 2));
    auto gemm_ex = [&] {
      DEMI_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &alpha, a,
                                     type, dim, a, type, dim, &beta, c, type, dim,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    record(precision, TimeProduct(gemm_ex, warmup, repeats));
    DEMI_CUDA_CHECK(cudaFree(a));
    DEMI_CUDA_CHECK(cudaFree(c));
  };
  half_rate("FLOAT16", ToDevice<float16>(host), CUDA_R_16F);
  half_rate("BFLOAT16", ToDevice<bfloat16>(host), CUDA_R_16BF);
  return rates;
}

#endif  // CPU_ONLY

}  // namespace demi
