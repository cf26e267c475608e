#include "demi/layers/tile_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// y[o, t, r] = x[o, r], one thread per top element.
__global__ void TileForwardKernel(int64_t n, int64_t tiles, int64_t inner, const float* x,
                                  float* y) {
  for (int64_t e = GridStart(); e < n; e += GridStride()) {
    y[e] = x[(e / (tiles * inner)) * inner + e % inner];
  }
}

/// dx[o, r] = sum over t of dy[o, t, r], in the CPU's order (t = 0 first).
__global__ void TileBackwardKernel(int64_t n, int64_t tiles, int64_t inner, const float* dy,
                                   float* dx) {
  for (int64_t e = GridStart(); e < n; e += GridStride()) {
    const float* copies = dy + (e / inner) * tiles * inner + e % inner;
    float sum = copies[0];
    for (int64_t t = 1; t < tiles; ++t) sum += copies[t * inner];
    dx[e] = sum;
  }
}

}  // namespace

// launchers

void TileLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = top[0]->count();
  if (n == 0) return;
  Launch("TileForwardKernel", CudaBlocks(n), TileForwardKernel, n, tiles_, inner_,
         bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

void TileLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  const int64_t n = bottom[0]->count();
  if (!propagate_down[0] || n == 0) return;
  Launch("TileBackwardKernel", CudaBlocks(n), TileBackwardKernel, n, tiles_, inner_,
         top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
