// The best single-precision GEMM rate of this machine, for bench/speed.sh's
// efficiency column: oneDNN's dnnl_sgemm and OpenBLAS's cblas_sgemm on a
// 2048^3 product, at 1 and 2 threads, best of 5 runs. One line each:
//   SGEMM library=dnnl threads=1 gflops=...
#include <cblas.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kSize = 2048;
constexpr int kRuns = 5;

double BestGflops(const std::string& library, const std::vector<float>& a,
                  const std::vector<float>& b, std::vector<float>* c) {
  double best = 0;
  for (int run = 0; run < kRuns; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (library == "dnnl") {
      dnnl_sgemm('N', 'N', kSize, kSize, kSize, 1.0f, a.data(), kSize, b.data(), kSize, 0.0f,
                 c->data(), kSize);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kSize, kSize, kSize, 1.0f, a.data(),
                  kSize, b.data(), kSize, 0.0f, c->data(), kSize);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 2.0 * kSize * kSize * kSize / seconds / 1e9);
  }
  return best;
}

}  // namespace

int main() {
  const size_t count = static_cast<size_t>(kSize) * kSize;
  std::vector<float> a(count), b(count), c(count);
  std::mt19937 rng(1701);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (size_t i = 0; i < count; ++i) {
    a[i] = uniform(rng);
    b[i] = uniform(rng);
  }
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    for (const std::string library : {"dnnl", "openblas"}) {
      std::printf("SGEMM library=%s threads=%d gflops=%.1f\n", library.c_str(), threads,
                  BestGflops(library, a, b, &c));
      std::fflush(stdout);
    }
  }
  return 0;
}
