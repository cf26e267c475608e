#include "demi/util/math.hpp"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>

namespace demi {

namespace {

int BlasInt(int64_t value) {
  CHECK_GE(value, 0);
  CHECK_LE(value, std::numeric_limits<int>::max()) << "dimension too large for BLAS's 32-bit int";
  return static_cast<int>(value);
}

GemmLibrary GemmLibraryFromEnvironment() {
  const char* value = std::getenv("DEMI_GEMM");
  if (value == nullptr || std::string(value).empty() || std::string(value) == "dnnl") {
    return GemmLibrary::kDnnl;
  }
  CHECK(std::string(value) == "openblas")
      << "DEMI_GEMM must be dnnl or openblas, got '" << value << "'";
  return GemmLibrary::kOpenBlas;
}

std::atomic<GemmLibrary>& GemmLibrarySetting() {
  static std::atomic<GemmLibrary> library(GemmLibraryFromEnvironment());
  return library;
}

}  // namespace

void SetGemmLibrary(GemmLibrary library) { GemmLibrarySetting() = library; }
GemmLibrary CurrentGemmLibrary() { return GemmLibrarySetting(); }

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          const float* b, float beta, float* c) {
  int lda = BlasInt(trans_a ? m : k);
  int ldb = BlasInt(trans_b ? k : n);
  if (CurrentGemmLibrary() == GemmLibrary::kDnnl) {
    const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k,
                                            alpha, a, lda, b, ldb, beta, c, n);
    CHECK_EQ(status, dnnl_success) << "dnnl_sgemm failed for " << m << " x " << n << " x " << k;
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, BlasInt(m), BlasInt(n), BlasInt(k), alpha, a,
              lda, b, ldb, beta, c, BlasInt(n));
}

void Gemv(bool trans_a, int64_t m, int64_t n, float alpha, const float* a, const float* x,
          float beta, float* y) {
  cblas_sgemv(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, BlasInt(m), BlasInt(n), alpha, a,
              BlasInt(n), x, 1, beta, y, 1);
}

void Axpy(int64_t n, float alpha, const float* x, float* y) {
  cblas_saxpy(BlasInt(n), alpha, x, 1, y, 1);
}

void Axpby(int64_t n, float alpha, const float* x, float beta, float* y) {
  if (beta == 0.0f) {
    Set(n, 0.0f, y);  // never propagate NaN from an uninitialised y
  } else {
    cblas_sscal(BlasInt(n), beta, y, 1);
  }
  cblas_saxpy(BlasInt(n), alpha, x, 1, y, 1);
}

void Scal(int64_t n, float alpha, float* x) { cblas_sscal(BlasInt(n), alpha, x, 1); }

void Copy(int64_t n, const float* x, float* y) {
  if (x != y && n > 0) std::memcpy(y, x, sizeof(float) * static_cast<size_t>(n));
}

void Set(int64_t n, float value, float* y) {
  if (value == 0.0f) {
    if (n > 0) std::memset(y, 0, sizeof(float) * static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = value;
}

void AddScalar(int64_t n, float alpha, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha;
}

void Add(int64_t n, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void Sub(int64_t n, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i];
}

void Mul(int64_t n, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void Div(int64_t n, const float* a, const float* b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i];
}

void Powx(int64_t n, const float* a, float b, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::pow(a[i], b);
}

void Sqr(int64_t n, const float* a, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i];
}

void Exp(int64_t n, const float* a, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(a[i]);
}

void Log(int64_t n, const float* a, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::log(a[i]);
}

void Abs(int64_t n, const float* a, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(a[i]);
}

void Tanh(int64_t n, const float* a, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(a[i]);
}

void TanhGradient(int64_t n, const float* y, const float* dy, float* dx) {
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

void ScaleRows(int64_t rows, int64_t width, const float* scale, const float* in, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < width; ++i) out[r * width + i] = scale[r] * in[r * width + i];
  }
}

void AddToRows(int64_t rows, int64_t width, const float* row, float* y) {
  for (int64_t r = 0; r < rows; ++r) Axpy(width, 1.0f, row, y + r * width);
}

void SumRows(int64_t rows, int64_t width, const float* x, float* sum) {
  for (int64_t r = 0; r < rows; ++r) Axpy(width, 1.0f, x + r * width, sum);
}

double Dot(int64_t n, const float* x, const float* y) { return StridedDot(n, x, 1, y, 1); }

double StridedDot(int64_t n, const float* x, int64_t incx, const float* y, int64_t incy) {
  return cblas_dsdot(BlasInt(n), x, BlasInt(incx), y, BlasInt(incy));
}

double Asum(int64_t n, const float* x) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::fabs(x[i]);
  return sum;
}

double Sumsq(int64_t n, const float* x) { return Dot(n, x, x); }

void RngUniform(int64_t n, float lo, float hi, float* r, RandomEngine* engine) {
  CHECK_LE(lo, hi);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < n; ++i) r[i] = dist(*engine);
}

void RngGaussian(int64_t n, float mean, float stddev, float* r, RandomEngine* engine) {
  CHECK_GT(stddev, 0);
  std::normal_distribution<float> dist(mean, stddev);
  for (int64_t i = 0; i < n; ++i) r[i] = dist(*engine);
}

void RngBernoulli(int64_t n, float p, uint32_t* r, RandomEngine* engine) {
  CHECK_GE(p, 0);
  CHECK_LE(p, 1);
  std::bernoulli_distribution dist(p);
  for (int64_t i = 0; i < n; ++i) r[i] = dist(*engine) ? 1u : 0u;
}

void SetBlasThreads(int threads) { openblas_set_num_threads(threads); }

int BlasThreads() { return openblas_get_num_threads(); }

}  // namespace demi
