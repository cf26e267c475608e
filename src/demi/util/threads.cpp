#include "demi/util/threads.hpp"

#include <cstdlib>
#include <string>

#include "demi/util/math.hpp"

namespace demi {

int DefaultThreads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    // OpenMP allows a list ("4,2": nested levels); the first is ours.
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1, omp_get_num_procs());
}

void SetBlasShare(int n) {
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
  SetBlasThreads(CurrentGemmLibrary() == GemmLibrary::kOpenBlas ? n : 1);
}

void SetThreads(int n) {
  if (n <= 0) n = DefaultThreads();
  omp_set_num_threads(n);
  SetBlasShare(n);
}

int Threads() { return omp_get_max_threads(); }

}  // namespace demi
