#include "demi/layers/filter_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// Row k of the top is row selected[k] of the bottom: y[k, r] =
/// x[selected[k], r], or with `backward` dx[selected[k], r] = dy[k, r]
/// (distinct rows, so no two threads write one element).
__global__ void FilterKernel(int64_t n, int64_t inner, const float* selected, bool backward,
                             const float* from, float* to) {
  for (int64_t e = GridStart(); e < n; e += GridStride()) {
    const int64_t at = static_cast<int64_t>(selected[e / inner]) * inner + e % inner;
    if (backward) {
      to[at] = from[e];
    } else {
      to[e] = from[at];
    }
  }
}

// launchers

void LaunchFilter(int64_t n, int64_t inner, const float* selected, bool backward, const float* from,
                  float* to) {
  if (n == 0) return;
  Launch("FilterKernel", CudaBlocks(n), FilterKernel, n, inner, selected, backward, from, to);
}

}  // namespace

void FilterLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  // The selection decides the tops' shapes, so it is made on the host.
  const Blob& selector = *bottom[selector_index_];
  DEMI_CHECK(selector.shape(0) <= int64_t{1} << 24, "Filter layer '", layer_param_.name(),
             "': the GPU indexes items in floats, which hold at most 2^24 of them, but the "
             "selector has ", selector.shape(0), "; run this layer on the CPU or split the batch");
  const float* keep = selector.cpu_data();
  selected_.clear();
  for (int64_t n = 0; n < selector.shape(0); ++n) {
    if (keep[n] != 0) selected_.push_back(n);
  }
  const int64_t num_selected = static_cast<int64_t>(selected_.size());
  selected_rows_.Reshape(std::vector<int64_t>{num_selected});
  float* rows = selected_rows_.mutable_cpu_data();
  for (int64_t k = 0; k < num_selected; ++k) rows[k] = static_cast<float>(selected_[k]);
  const float* selected = num_selected > 0 ? selected_rows_.gpu_data() : nullptr;
  for (int i = 0; i < selector_index_; ++i) {
    shapes_[i][0] = num_selected;
    top[i]->Reshape(shapes_[i]);
    LaunchFilter(top[i]->count(), bottom[i]->count(1), selected, false, bottom[i]->gpu_data(),
                 top[i]->mutable_gpu_data());
  }
}

void FilterLayer::Backward_gpu(const std::vector<Blob*>& top,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, selector_index_, "its selector (the last bottom)");
  const float* selected = selected_.empty() ? nullptr : selected_rows_.gpu_data();
  for (int i = 0; i < selector_index_; ++i) {
    if (!propagate_down[i]) continue;
    float* dx = bottom[i]->mutable_gpu_diff();
    GpuSet(bottom[i]->count(), 0.0f, dx);
    LaunchFilter(top[i]->count(), bottom[i]->count(1), selected, true, top[i]->gpu_diff(), dx);
  }
}

}  // namespace demi
