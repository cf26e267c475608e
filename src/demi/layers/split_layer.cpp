#include "demi/layers/split_layer.hpp"

#include <algorithm>

#include "demi/layer_registry.hpp"
#include "demi/util/device_math.hpp"
#include "demi/util/rounded_chunks.hpp"

namespace demi {

/// dx = the sum of the tops' 16-bit gradients, added in FLOAT and rounded
/// once; a chunk of every top is read before dx's chunk is written.
template <typename Half>
void SplitLayer::SumHalfDiffs(const std::vector<Blob*>& top, Blob* bottom) {
  std::vector<const void*>& dys = top_diffs_;
  dys.clear();
  for (const Blob* blob : top) dys.push_back(blob->cpu_diff_as<Half>());
  Half* dx = bottom->mutable_cpu_diff_as<Half>();
  ParallelStoreRounded(bottom->count(), dx, [&](int64_t at, int64_t n, float* sum) {
    const Half* first = static_cast<const Half*>(dys[0]) + at;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) sum[i] = first[i];
    for (size_t t = 1; t < dys.size(); ++t) {
      const Half* dy = static_cast<const Half*>(dys[t]) + at;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) sum[i] += dy[i];
    }
  });
}

void SplitLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  for (Blob* blob : top) {
    DEMI_CHECK(blob != bottom[0], "Split layer '", layer_param_.name(), "' cannot run in place");
    blob->ReshapeLike(*bottom[0]);
    blob->ShareData(*bottom[0]);
  }
  top_diffs_.reserve(top.size());
}

void SplitLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  // Reshape keeps every top a view of the bottom's data, so nothing moves;
  // re-share in case the bottom's memory was replaced since.
  for (Blob* blob : top) {
    if (blob->data() != bottom[0]->data()) blob->ShareData(*bottom[0]);
  }
}

void SplitLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU && bottom[0]->storage_type() != FLOAT) {
    return SumHalfDiffsGpu(top, bottom[0]);
  }
#endif
  if (bottom[0]->storage_type() == BFLOAT16) return SumHalfDiffs<bfloat16>(top, bottom[0]);
  if (bottom[0]->storage_type() == FLOAT16) return SumHalfDiffs<float16>(top, bottom[0]);
  const Device device = context_.device;
  const int64_t count = bottom[0]->count();
  float* dx = bottom[0]->mutable_diff_on(device);
  if (top.size() == 1) {
    Copy(device, count, top[0]->diff_on(device), dx);
    return;
  }
  // The first two in one pass (the same sums as a copy and an axpy by 1).
  Add(device, count, top[0]->diff_on(device), top[1]->diff_on(device), dx);
  for (size_t i = 2; i < top.size(); ++i) Axpy(device, count, 1.0f, top[i]->diff_on(device), dx);
}

DEMI_REGISTER_LAYER(Split);

}  // namespace demi
