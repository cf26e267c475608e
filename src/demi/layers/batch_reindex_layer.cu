#include <algorithm>
#include <numeric>

#include "demi/layers/batch_reindex_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// y[i, k] = x[index[i], k].
__global__ void ReindexForwardKernel(int64_t n, int64_t inner, const float* index, const float* x,
                                     float* y) {
  for (int64_t e = GridStart(); e < n; e += GridStride()) {
    y[e] = x[static_cast<int64_t>(index[e / inner]) * inner + e % inner];
  }
}

/// dx[m, k] = sum of dy[i, k] over the positions i that gathered item m,
/// items[begin[m]] .. items[begin[m + 1] - 1] in increasing order (the CPU's
/// order), so the sum needs no atomics.
__global__ void ReindexBackwardKernel(int64_t n, int64_t inner, const float* begin,
                                      const float* items, const float* dy, float* dx) {
  for (int64_t e = GridStart(); e < n; e += GridStride()) {
    const int64_t item = e / inner;
    const int64_t k = e % inner;
    const int64_t first = static_cast<int64_t>(begin[item]);
    const int64_t last = static_cast<int64_t>(begin[item + 1]);
    float sum = 0.0f;
    for (int64_t t = first; t < last; ++t) sum += dy[static_cast<int64_t>(items[t]) * inner + k];
    dx[e] = sum;
  }
}

}  // namespace

// launchers

void BatchReindexLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                    const std::vector<Blob*>& top) {
  const float* index = bottom[1]->cpu_data();
  for (int64_t i = 0; i < bottom[1]->count(); ++i) CheckedItem(index[i], i, *bottom[0]);
  const int64_t n = top[0]->count();
  if (n == 0) return;
  Launch("ReindexForwardKernel", CudaBlocks(n), ReindexForwardKernel, n, bottom[0]->count(1),
         bottom[1]->gpu_data(), bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

void BatchReindexLayer::Backward_gpu(const std::vector<Blob*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 1, "its indices");
  if (!propagate_down[0]) return;
  const int64_t num = bottom[0]->shape(0);
  const int64_t positions = bottom[1]->count();
  // Group the positions by the item they gathered (a counting sort keeps
  // them in increasing order); floats hold these integers exactly.
  DEMI_CHECK(std::max(num, positions) <= int64_t{1} << 24, "BatchReindex layer '",
             layer_param_.name(), "': the GPU backward indexes items in floats, which hold at ",
             "most 2^24 of them, but there are ", num, " items and ", positions,
             " indices; train this layer on the CPU or split the batch");
  const float* index = bottom[1]->cpu_data();
  gather_.Reshape(std::vector<int64_t>{num + 1 + positions});
  float* begin = gather_.mutable_cpu_data();
  float* items = begin + num + 1;
  std::vector<int64_t> next(static_cast<size_t>(num) + 1, 0);
  for (int64_t i = 0; i < positions; ++i) ++next[static_cast<int64_t>(index[i]) + 1];
  std::partial_sum(next.begin(), next.end(), next.begin());
  for (int64_t m = 0; m <= num; ++m) begin[m] = static_cast<float>(next[m]);
  for (int64_t i = 0; i < positions; ++i) {
    items[next[static_cast<int64_t>(index[i])]++] = static_cast<float>(i);
  }
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  const float* gather = gather_.gpu_data();
  Launch("ReindexBackwardKernel", CudaBlocks(n), ReindexBackwardKernel, n, bottom[0]->count(1),
         gather, gather + num + 1, top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
