#include "demi/layers/concat_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// Moves one bottom's elements to or from their place in the top: bottom
/// element k is column k % block of row k / block, which sits at
/// row * top_block + offset + column in the top.
__global__ void ConcatKernel(int64_t n, int64_t block, int64_t top_block, int64_t offset,
                             bool to_top, const float* from, float* to) {
  for (int64_t k = GridStart(); k < n; k += GridStride()) {
    const int64_t at = (k / block) * top_block + offset + k % block;
    if (to_top) {
      to[at] = from[k];
    } else {
      to[k] = from[at];
    }
  }
}

// launchers

void LaunchConcat(int64_t n, int64_t block, int64_t top_block, int64_t offset, bool to_top,
                  const float* from, float* to) {
  if (n == 0) return;
  ConcatKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, block, top_block, offset,
                                                                 to_top, from, to);
  CheckLaunch("ConcatKernel");
}

}  // namespace

void ConcatLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (bottom.size() == 1) return;  // the top is a view of the bottom
  float* y = top[0]->mutable_gpu_data();
  const int64_t top_block = top[0]->shape(axis_) * inner_size_;
  int64_t offset = 0;
  for (const Blob* blob : bottom) {
    const int64_t block = blob->shape(axis_) * inner_size_;
    LaunchConcat(blob->count(), block, top_block, offset, true, blob->gpu_data(), y);
    offset += block;
  }
}

void ConcatLayer::Backward_gpu(const std::vector<Blob*>& top,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob*>& bottom) {
  if (bottom.size() == 1) return;  // the bottom's diff is the top's
  const float* dy = top[0]->gpu_diff();
  const int64_t top_block = top[0]->shape(axis_) * inner_size_;
  int64_t offset = 0;
  for (size_t i = 0; i < bottom.size(); ++i) {
    const int64_t block = bottom[i]->shape(axis_) * inner_size_;
    if (propagate_down[i]) {
      LaunchConcat(bottom[i]->count(), block, top_block, offset, false, dy,
                   bottom[i]->mutable_gpu_diff());
    }
    offset += block;
  }
}

}  // namespace demi
