#ifndef DEMI_UTIL_GEMM_RATE_HPP_
#define DEMI_UTIL_GEMM_RATE_HPP_

// The GPU's own matrix-multiply rate through cuBLAS: the roofline beside which
// bench/gpu.sh reads a net's throughput (`device_query --gemm`).
#include <cstdint>
#include <string>
#include <vector>

namespace demi {

/// One square product measured on the current GPU.
struct GemmRate {
  std::string precision;  ///< "FP32", "TF32", "FLOAT16" or "BFLOAT16" (inputs; fp32 sums)
  int64_t n = 0;          ///< the product is n x n times n x n
  double ms = 0;          ///< device time of one product, the mean of the timed ones
  double tflops = 0;      ///< 2 n^3 / ms
};

/// Times n x n x n products on random data in each precision cuBLAS offers
/// with fp32 accumulation: FP32 (plain FMA math), TF32 tensor ops, and FLOAT16
/// and BFLOAT16 inputs (cublasGemmEx, CUBLAS_COMPUTE_32F). `warmup` untimed
/// products, then `repeats` timed by CUDA events. Fails in a CPU_ONLY build.
std::vector<GemmRate> MeasureGemmRates(int64_t n, int warmup, int repeats);

}  // namespace demi

#endif  // DEMI_UTIL_GEMM_RATE_HPP_
