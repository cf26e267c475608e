#ifndef DEMI_UTIL_THREADS_HPP_
#define DEMI_UTIL_THREADS_HPP_

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <utility>

namespace demi {

// One thread setting for the CPU: OpenMP (the CAFFE engine's loops, and
// oneDNN, which runs on GNU OpenMP) and OpenBLAS (its own pthread pool).

/// OMP_NUM_THREADS when set (its first number), else the cores this process
/// may run on.
int DefaultThreads();
/// Sets the threads of OpenMP (for the calling thread: OpenMP's setting is
/// per thread) and of OpenBLAS (process-wide; left alone when
/// OPENBLAS_NUM_THREADS is set, which OpenBLAS honours itself). n <= 0 means
/// DefaultThreads().
void SetThreads(int n);
/// Gives OpenBLAS `n` threads when it runs the GEMMs (DEMI_GEMM=openblas),
/// else one: then it only computes a few dot products, and its thread pool
/// never competes with OpenMP's for the cores. Left alone when
/// OPENBLAS_NUM_THREADS is set.
void SetBlasShare(int n);
/// The threads a parallel loop started on the calling thread uses.
int Threads();

/// A std::thread running fn() with the calling thread's OpenMP threads. A
/// new thread otherwise starts from OpenMP's process-wide default
/// (OMP_NUM_THREADS, else every core), not from --threads or a replica's
/// share: ranks started with one core each then all thread over every core.
/// `threads` > 0 gives the new thread that many instead.
template <typename Fn>
std::thread StartThread(Fn fn, int threads = 0) {
  if (threads <= 0) threads = Threads();
  return std::thread([threads, fn = std::move(fn)]() mutable {
    omp_set_num_threads(threads);
    fn();
  });
}

/// Work (about one float read and written each) below which a loop stays on
/// the calling thread: waking the team costs more than it saves.
constexpr int64_t kMinParallelWork = int64_t{1} << 15;

/// Items per thread so that each does at least kMinParallelWork, for loops
/// whose items (planes, channels, rows) cost `work_per_item` each.
inline int64_t GrainFor(int64_t work_per_item) {
  return std::max<int64_t>(1, kMinParallelWork / std::max<int64_t>(1, work_per_item));
}

/// Runs body(begin, end) over [0, n) cut into contiguous blocks, one per
/// thread, each of at least `grain` items (so small loops run on the calling
/// thread alone, without entering OpenMP). The blocks depend only on n,
/// grain and Threads(), and each item is in exactly one block: an
/// element-wise body gives bit-identical results for any thread count (the
/// build has no FMA contraction, so vector and scalar code round alike).
/// Nested in a parallel region it runs on the calling thread.
template <typename Body>
void ParallelFor(int64_t n, int64_t grain, const Body& body) {
  if (n <= 0) return;
  const int64_t blocks = std::min<int64_t>(omp_in_parallel() ? 1 : Threads(), n / grain);
  if (blocks <= 1) {
    // A private copy: its captures cannot alias what the body stores through,
    // so GCC keeps them in registers and vectorises the body's loops.
    Body local = body;
    local(int64_t{0}, n);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(blocks)
  for (int64_t b = 0; b < blocks; ++b) {
    Body local = body;
    local(n * b / blocks, n * (b + 1) / blocks);
  }
}

/// ParallelFor over n elements of about one float of work each.
template <typename Body>
void ParallelFor(int64_t n, const Body& body) {
  ParallelFor(n, kMinParallelWork, body);
}

}  // namespace demi

#endif  // DEMI_UTIL_THREADS_HPP_
