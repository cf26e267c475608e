#include "demi/layers/slice_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// Moves one top's elements to or from their place in the bottom: top
/// element k is column k % block of row k / block, which sits at
/// row * bottom_block + offset + column in the bottom.
__global__ void SliceKernel(int64_t n, int64_t block, int64_t bottom_block, int64_t offset,
                            bool to_top, const float* from, float* to) {
  for (int64_t k = GridStart(); k < n; k += GridStride()) {
    const int64_t at = (k / block) * bottom_block + offset + k % block;
    if (to_top) {
      to[k] = from[at];
    } else {
      to[at] = from[k];
    }
  }
}

// launchers

void LaunchSlice(int64_t n, int64_t block, int64_t bottom_block, int64_t offset, bool to_top,
                 const float* from, float* to) {
  if (n == 0) return;
  SliceKernel<<<CudaBlocks(n), kCudaThreads, 0, CudaStream()>>>(n, block, bottom_block, offset,
                                                                to_top, from, to);
  CheckLaunch("SliceKernel");
}

}  // namespace

void SliceLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (top.size() == 1) return;  // the top is a view of the bottom
  const float* x = bottom[0]->gpu_data();
  const int64_t bottom_block = bottom[0]->shape(axis_) * inner_size_;
  int64_t offset = 0;
  for (Blob* blob : top) {
    const int64_t block = blob->shape(axis_) * inner_size_;
    LaunchSlice(blob->count(), block, bottom_block, offset, true, x, blob->mutable_gpu_data());
    offset += block;
  }
}

void SliceLayer::Backward_gpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom) {
  if (!propagate_down[0] || top.size() == 1) return;  // one top: the diff is shared
  float* dx = bottom[0]->mutable_gpu_diff();
  const int64_t bottom_block = bottom[0]->shape(axis_) * inner_size_;
  int64_t offset = 0;
  for (const Blob* blob : top) {
    const int64_t block = blob->shape(axis_) * inner_size_;
    LaunchSlice(blob->count(), block, bottom_block, offset, false, blob->gpu_diff(), dx);
    offset += block;
  }
}

}  // namespace demi
