#include <algorithm>

#include "demi/layers/split_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

/// The tops' gradients one kernel adds.
constexpr int kTopsPerPass = 4;

template <typename T>
struct TopDiffs {
  const T* dy[kTopsPerPass];
  int count;
};

// kernels

/// dx = the sum of the gradients in `tops` (after dx's own where
/// `accumulate`), added in FLOAT in order and rounded once to T.
template <typename T>
__global__ void SumStoredKernel(int64_t n, TopDiffs<T> tops, bool accumulate, T* dx) {
  ElementwiseStore(n, dx, [=](int64_t i) {
    float sum = accumulate ? Widen(dx[i]) : Widen(tops.dy[0][i]);
    for (int k = accumulate ? 0 : 1; k < tops.count; ++k) sum += Widen(tops.dy[k][i]);
    return sum;
  });
}

}  // namespace

// launchers

void SplitLayer::SumHalfDiffsGpu(const std::vector<Blob*>& top, Blob* bottom) {
  const int64_t n = bottom->count();
  if (n == 0) return;
  VisitStorageType(bottom->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    // Most splits have 2 or 3 tops: one pass, one rounding, as on the CPU.
    // More tops take a pass per kTopsPerPass, each rounding once more.
    for (size_t first = 0; first < top.size(); first += kTopsPerPass) {
      TopDiffs<T> tops{};
      tops.count = static_cast<int>(std::min<size_t>(kTopsPerPass, top.size() - first));
      for (int k = 0; k < tops.count; ++k) tops.dy[k] = GpuDiffAs<T>(*top[first + k]);
      Launch("SumStoredKernel", ElementwiseBlocks(n), SumStoredKernel<T>, n, tops, first > 0,
             MutableGpuDiffAs<T>(bottom));
    }
  });
}

}  // namespace demi
