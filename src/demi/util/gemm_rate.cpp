#include "demi/util/gemm_rate.hpp"

#include <functional>
#include <memory>

#include "demi/common.hpp"

#ifndef CPU_ONLY
#include <library_types.h>

#include "demi/util/bfloat16.hpp"
#include "demi/util/cuda.hpp"
#include "demi/util/device.hpp"
#include "demi/util/float16.hpp"
#include "demi/util/interval_timer.hpp"
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
  const std::vector<T> typed(values.begin(), values.end());
  void* device = DeviceMalloc(typed.size() * sizeof(T));
  CopyHostToDevice(device, typed.data(), typed.size() * sizeof(T));
  return device;
}

/// The mean device milliseconds of `product` over `repeats` runs after
/// `warmup`, on the device clock `time` uses.
double TimeProduct(const std::function<void()>& product, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) product();
  const std::unique_ptr<IntervalTimer> timer = MakeDeviceTimer(1);
  timer->Begin(0);
  for (int i = 0; i < repeats; ++i) product();
  timer->End(0);
  timer->Collect();
  return timer->total_ms(0) / repeats;
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
    void* c = DeviceMalloc(n * n * sizeof(float));
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
    DeviceFree(a);
    DeviceFree(c);
  }
  // 16-bit inputs and output, fp32 sums: what a 16-bit layer's product runs.
  auto half_rate = [&](const char* precision, void* a, cudaDataType_t type) {
    void* c = DeviceMalloc(n * n * 2);
    auto gemm_ex = [&] {
      DEMI_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &alpha, a,
                                     type, dim, a, type, dim, &beta, c, type, dim,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    record(precision, TimeProduct(gemm_ex, warmup, repeats));
    DeviceFree(a);
    DeviceFree(c);
  };
  half_rate("FLOAT16", ToDevice<float16>(host), CUDA_R_16F);
  half_rate("BFLOAT16", ToDevice<bfloat16>(host), CUDA_R_16BF);
  return rates;
}

#endif  // CPU_ONLY

}  // namespace demi
