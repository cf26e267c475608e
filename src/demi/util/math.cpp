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

#include "demi/util/threads.hpp"
#include "demi/util/vector_clones.hpp"

namespace demi {

namespace {

/// BLAS takes int sizes; a layer past them is a user's net to reshape.
int BlasInt(int64_t value) {
  CHECK_GE(value, 0);
  DEMI_CHECK(value <= std::numeric_limits<int>::max(), "a matrix dimension of ", value,
             " is past BLAS's 32-bit int (", std::numeric_limits<int>::max(),
             "): use a smaller batch or split the layer");
  return static_cast<int>(value);
}

GemmLibrary GemmLibraryFromEnvironment() {
  const char* value = std::getenv("DEMI_GEMM");
  if (value == nullptr || std::string(value).empty() || std::string(value) == "dnnl") {
    return GemmLibrary::kDnnl;
  }
  DEMI_CHECK(std::string(value) == "openblas", "the environment variable DEMI_GEMM is '", value,
             "'; set it to dnnl or openblas, or unset it (dnnl)");
  return GemmLibrary::kOpenBlas;
}

std::atomic<GemmLibrary>& GemmLibrarySetting() {
  static std::atomic<GemmLibrary> library(GemmLibraryFromEnvironment());
  return library;
}

}  // namespace

// OpenBLAS picks its kernels by CPU model; a model newer than the library (e.g. a VM's Emerald
// Rapids under Debian 12's 0.3.21) gets the SSE3 "Prescott" kernels, 5-10x slower.
std::string OpenBlasCoreTypeForThisCpu() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return "";
  if (std::string(openblas_get_corename()) != "Prescott" || !__builtin_cpu_supports("avx2")) {
    return "";
  }
  return __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell";
}

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
  static const bool warned_of_generic_kernels = [] {
    const std::string core_type = OpenBlasCoreTypeForThisCpu();
    LOG_IF(WARNING, !core_type.empty())
        << "OpenBLAS does not know this CPU and runs its generic SSE3 kernels; set "
        << "OPENBLAS_CORETYPE=" << core_type << " in the environment for its vectorised ones";
    return true;
  }();
  (void)warned_of_generic_kernels;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, BlasInt(m), BlasInt(n), BlasInt(k), alpha, a,
              lda, b, ldb, beta, c, BlasInt(n));
}

void Gemv(bool trans_a, int64_t m, int64_t n, float alpha, const float* a, const float* x,
          float beta, float* y) {
  cblas_sgemv(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, BlasInt(m), BlasInt(n), alpha, a,
              BlasInt(n), x, 1, beta, y, 1);
}

// Element-wise kernels: one clone per ISA (DEMI_VECTOR_CLONES). `omp simd`
// makes GCC vectorise them at -O2 and states that y may alias x only element
// for element (in place). The public functions cut [0, n) into one block per
// thread (ParallelFor): each element is computed by the same code whatever
// the thread count, so results are bit-identical for any count.

namespace {

constexpr int kLanes = 8;

// The lanes are combined pairwise in one fixed order, then the tail is added.
double CombineLanes(const double* lane) {
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

DEMI_VECTOR_CLONES double LaneSumKernel(int64_t n, const float* x) {
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] += x[i + j];
  }
  double sum = CombineLanes(lane);
  for (; i < n; ++i) sum += x[i];
  return sum;
}

DEMI_VECTOR_CLONES double LaneDotKernel(int64_t n, const float* x, const float* y) {
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] += double(x[i + j]) * y[i + j];
  }
  double sum = CombineLanes(lane);
  for (; i < n; ++i) sum += double(x[i]) * y[i];
  return sum;
}

DEMI_VECTOR_CLONES double LaneSquaredDeviationKernel(int64_t n, const float* x, double mean) {
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double d = x[i + j] - mean;
      lane[j] += d * d;
    }
  }
  double sum = CombineLanes(lane);
  for (; i < n; ++i) sum += (x[i] - mean) * (x[i] - mean);
  return sum;
}

DEMI_VECTOR_CLONES void AxpbyKernel(int64_t n, float alpha, const float* x, float beta, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = alpha * x[i] + beta * y[i];
}

DEMI_VECTOR_CLONES void AxpyKernel(int64_t n, float alpha, const float* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

DEMI_VECTOR_CLONES void ScaleKernel(int64_t n, float alpha, const float* x, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = alpha * x[i];
}

DEMI_VECTOR_CLONES void SetKernel(int64_t n, float value, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = value;
}

DEMI_VECTOR_CLONES void AddScalarKernel(int64_t n, float alpha, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += alpha;
}

DEMI_VECTOR_CLONES void AddKernel(int64_t n, const float* a, const float* b, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

DEMI_VECTOR_CLONES void SubKernel(int64_t n, const float* a, const float* b, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i];
}

DEMI_VECTOR_CLONES void MulKernel(int64_t n, const float* a, const float* b, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

DEMI_VECTOR_CLONES void DivKernel(int64_t n, const float* a, const float* b, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i];
}

DEMI_VECTOR_CLONES void SqrKernel(int64_t n, const float* a, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i];
}

DEMI_VECTOR_CLONES void AbsKernel(int64_t n, const float* a, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(a[i]);
}

DEMI_VECTOR_CLONES void TanhGradientKernel(int64_t n, const float* y, const float* dy, float* dx) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

/// Transcendentals: libm has no vector forms without -ffast-math, so these
/// are threaded only. They cost about 20 floats' work each.
constexpr int64_t kTranscendentalWork = 20;

}  // namespace

void Axpy(int64_t n, float alpha, const float* x, float* y) {
  ParallelFor(n, [&](int64_t b, int64_t e) { AxpyKernel(e - b, alpha, x + b, y + b); });
}

void Axpby(int64_t n, float alpha, const float* x, float beta, float* y) {
  if (beta == 0.0f) {
    // Never propagate NaN from an uninitialised y.
    ParallelFor(n, [&](int64_t b, int64_t e) { ScaleKernel(e - b, alpha, x + b, y + b); });
    return;
  }
  ParallelFor(n, [&](int64_t b, int64_t e) { AxpbyKernel(e - b, alpha, x + b, beta, y + b); });
}

void Scal(int64_t n, float alpha, float* x) {
  ParallelFor(n, [&](int64_t b, int64_t e) { ScaleKernel(e - b, alpha, x + b, x + b); });
}

bool ScalAllFinite(int64_t n, float alpha, float* x) {
  std::atomic<bool> all_finite{true};
  ParallelFor(n, [&](int64_t b, int64_t e) {
    ScaleKernel(e - b, alpha, x + b, x + b);
    // |v| <= FLT_MAX is false for infinities and NaNs alike; a branch-free
    // count lets the loop vectorise.
    int64_t bad = 0;
    for (int64_t i = b; i < e; ++i) bad += !(std::fabs(x[i]) <= std::numeric_limits<float>::max());
    if (bad) all_finite.store(false, std::memory_order_relaxed);
  });
  return all_finite.load();
}

void Copy(int64_t n, const float* x, float* y) {
  if (x == y || n <= 0) return;
  ParallelFor(n, [&](int64_t b, int64_t e) {
    std::memcpy(y + b, x + b, sizeof(float) * static_cast<size_t>(e - b));
  });
}

namespace {

/// Copies n two-byte elements (bfloat16 or float16: a copy moves bits).
void CopyHalves(int64_t n, const void* x, void* y) {
  if (x == y || n <= 0) return;
  const auto* from = static_cast<const uint16_t*>(x);
  auto* to = static_cast<uint16_t*>(y);
  ParallelFor(n, [&](int64_t b, int64_t e) {
    std::memcpy(to + b, from + b, sizeof(uint16_t) * static_cast<size_t>(e - b));
  });
}

}  // namespace

void Copy(int64_t n, const bfloat16* x, bfloat16* y) { CopyHalves(n, x, y); }

void Copy(int64_t n, const float16* x, float16* y) { CopyHalves(n, x, y); }

void Set(int64_t n, float value, float* y) {
  if (value == 0.0f) {
    ParallelFor(n, [&](int64_t b, int64_t e) {
      std::memset(y + b, 0, sizeof(float) * static_cast<size_t>(e - b));
    });
    return;
  }
  ParallelFor(n, [&](int64_t b, int64_t e) { SetKernel(e - b, value, y + b); });
}

void AddScalar(int64_t n, float alpha, float* y) {
  ParallelFor(n, [&](int64_t b, int64_t e) { AddScalarKernel(e - b, alpha, y + b); });
}

void Add(int64_t n, const float* a, const float* b, float* y) {
  ParallelFor(n, [&](int64_t i, int64_t e) { AddKernel(e - i, a + i, b + i, y + i); });
}

void Sub(int64_t n, const float* a, const float* b, float* y) {
  ParallelFor(n, [&](int64_t i, int64_t e) { SubKernel(e - i, a + i, b + i, y + i); });
}

void Mul(int64_t n, const float* a, const float* b, float* y) {
  ParallelFor(n, [&](int64_t i, int64_t e) { MulKernel(e - i, a + i, b + i, y + i); });
}

void Div(int64_t n, const float* a, const float* b, float* y) {
  ParallelFor(n, [&](int64_t i, int64_t e) { DivKernel(e - i, a + i, b + i, y + i); });
}

void Powx(int64_t n, const float* a, float b, float* y) {
  ParallelFor(n, GrainFor(kTranscendentalWork), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = std::pow(a[i], b);
  });
}

void Sqr(int64_t n, const float* a, float* y) {
  ParallelFor(n, [&](int64_t b, int64_t e) { SqrKernel(e - b, a + b, y + b); });
}

void Exp(int64_t n, const float* a, float* y) {
  ParallelFor(n, GrainFor(kTranscendentalWork), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = std::exp(a[i]);
  });
}

void Log(int64_t n, const float* a, float* y) {
  ParallelFor(n, GrainFor(kTranscendentalWork), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = std::log(a[i]);
  });
}

void Abs(int64_t n, const float* a, float* y) {
  ParallelFor(n, [&](int64_t b, int64_t e) { AbsKernel(e - b, a + b, y + b); });
}

void Tanh(int64_t n, const float* a, float* y) {
  ParallelFor(n, GrainFor(kTranscendentalWork), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = std::tanh(a[i]);
  });
}

void TanhGradient(int64_t n, const float* y, const float* dy, float* dx) {
  ParallelFor(n, [&](int64_t b, int64_t e) { TanhGradientKernel(e - b, y + b, dy + b, dx + b); });
}

void ScaleRows(int64_t rows, int64_t width, const float* scale, const float* in, float* out) {
  ParallelFor(rows, GrainFor(width), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      ScaleKernel(width, scale[r], in + r * width, out + r * width);
    }
  });
}

void AddToRows(int64_t rows, int64_t width, const float* row, float* y) {
  ParallelFor(rows, GrainFor(width), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) AxpyKernel(width, 1.0f, row, y + r * width);
  });
}

void SumRows(int64_t rows, int64_t width, const float* x, float* sum) {
  // Threads take columns: each sum[i] still adds rows 0, 1, ... in order.
  ParallelFor(width, GrainFor(rows), [&](int64_t begin, int64_t end) {
    for (int64_t r = 0; r < rows; ++r) {
      AxpyKernel(end - begin, 1.0f, x + r * width + begin, sum + begin);
    }
  });
}

double Dot(int64_t n, const float* x, const float* y) { return StridedDot(n, x, 1, y, 1); }

double LaneSum(int64_t n, const float* x) { return LaneSumKernel(n, x); }
double LaneDot(int64_t n, const float* x, const float* y) { return LaneDotKernel(n, x, y); }
double LaneSquaredDeviation(int64_t n, const float* x, double mean) {
  return LaneSquaredDeviationKernel(n, x, mean);
}

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
