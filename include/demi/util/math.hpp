#ifndef DEMI_UTIL_MATH_HPP_
#define DEMI_UTIL_MATH_HPP_

#include <cstdint>
#include <string>

#include "demi/common.hpp"
#include "demi/util/bfloat16.hpp"
#include "demi/util/float16.hpp"

namespace demi {

// Dense linear algebra on host floats, through CBLAS (OpenBLAS). Matrices are
// row-major, as in Caffe. Sizes are int64_t here and narrowed (checked) to
// BLAS's int at the call.

/// Which library runs Gemm: oneDNN's sgemm (the default; JIT code for the
/// host's vector units, about twice OpenBLAS's speed on AVX-512) or OpenBLAS
/// (BVLC Caffe's speed). The environment variable DEMI_GEMM=openblas picks
/// OpenBLAS at startup; the setting is process-wide.
enum class GemmLibrary { kDnnl, kOpenBlas };
void SetGemmLibrary(GemmLibrary library);
GemmLibrary CurrentGemmLibrary();
/// The OPENBLAS_CORETYPE that gives OpenBLAS its vectorised kernels where it fell
/// back to its generic SSE3 ones on a CPU model it does not know (it reads the
/// variable only when it loads); "" where its own choice stands or the variable is set.
std::string OpenBlasCoreTypeForThisCpu();

/// C = alpha * op(A) * op(B) + beta * C, with op(A) M x K and op(B) K x N.
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          const float* b, float beta, float* c);
/// y = alpha * op(A) * x + beta * y, with A M x N.
void Gemv(bool trans_a, int64_t m, int64_t n, float alpha, const float* a, const float* x,
          float beta, float* y);
void Axpy(int64_t n, float alpha, const float* x, float* y);  ///< y += a x
void Axpby(int64_t n, float alpha, const float* x, float beta, float* y);
void Scal(int64_t n, float alpha, float* x);  ///< x *= a
/// x *= a; whether every result is finite (loss scaling's overflow check, in the same pass).
bool ScalAllFinite(int64_t n, float alpha, float* x);
void Copy(int64_t n, const float* x, float* y);
void Copy(int64_t n, const bfloat16* x, bfloat16* y);
void Copy(int64_t n, const float16* x, float16* y);
void Set(int64_t n, float value, float* y);
void AddScalar(int64_t n, float alpha, float* y);  ///< y += a
void Add(int64_t n, const float* a, const float* b, float* y);
void Sub(int64_t n, const float* a, const float* b, float* y);
void Mul(int64_t n, const float* a, const float* b, float* y);
void Div(int64_t n, const float* a, const float* b, float* y);
void Powx(int64_t n, const float* a, float b, float* y);
void Sqr(int64_t n, const float* a, float* y);
void Exp(int64_t n, const float* a, float* y);
void Log(int64_t n, const float* a, float* y);
void Abs(int64_t n, const float* a, float* y);
void Tanh(int64_t n, const float* a, float* y);
/// dx = dy (1 - y^2), the gradient through y = tanh(x); dx may be dy.
void TanhGradient(int64_t n, const float* y, const float* dy, float* dx);

// Row operations on a row-major `rows` x `width` matrix.

/// out[r, i] = scale[r] * in[r, i]; out may be in.
void ScaleRows(int64_t rows, int64_t width, const float* scale, const float* in, float* out);
/// y[r, i] += row[i] (a bias added to every row).
void AddToRows(int64_t rows, int64_t width, const float* row, float* y);
/// sum[i] += x[r, i] for r = 0, 1, ... in that order (a bias gradient).
void SumRows(int64_t rows, int64_t width, const float* x, float* sum);

/// Reductions accumulate in double so long sums stay accurate.
double Dot(int64_t n, const float* x, const float* y);

// Reductions of one row, in double over 8 interleaved lanes that are added in
// a fixed order at the end: vectorised, yet the same bits on every host (the
// lanes, not the vector width, fix the order) and for any thread count
// (each row is reduced by one thread). For per-channel statistics.

/// sum of x[i].
double LaneSum(int64_t n, const float* x);
/// sum of x[i] * y[i].
double LaneDot(int64_t n, const float* x, const float* y);
/// sum of (x[i] - mean)^2.
double LaneSquaredDeviation(int64_t n, const float* x, double mean);
double Asum(int64_t n, const float* x);
double Sumsq(int64_t n, const float* x);

/// Strided dot: sum over i of x[i * incx] * y[i * incy].
double StridedDot(int64_t n, const float* x, int64_t incx, const float* y, int64_t incy);

/// Threads OpenBLAS may use for one call (process-wide), and how many it uses.
void SetBlasThreads(int threads);
int BlasThreads();

// Random numbers, drawn from an explicit engine.
void RngUniform(int64_t n, float lo, float hi, float* r, RandomEngine* engine);
void RngGaussian(int64_t n, float mean, float stddev, float* r, RandomEngine* engine);
void RngBernoulli(int64_t n, float p, uint32_t* r, RandomEngine* engine);

}  // namespace demi

#endif  // DEMI_UTIL_MATH_HPP_
