#include "demi/layers/part_copy.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// Part element k is column k % part_row of row k / part_row, which sits at
/// row * whole_row + offset + column in the whole.
__global__ void CopyPartKernel(int64_t n, int64_t part_row, int64_t whole_row, int64_t offset,
                               bool into_whole, const float* from, float* to) {
  for (int64_t k = GridStart(); k < n; k += GridStride()) {
    const int64_t at = (k / part_row) * whole_row + offset + k % part_row;
    if (into_whole) {
      to[at] = from[k];
    } else {
      to[k] = from[at];
    }
  }
}

}  // namespace

// launchers

void GpuCopyPart(int64_t n, int64_t part_row, int64_t whole_row, int64_t offset, bool into_whole,
                 const float* from, float* to) {
  if (n == 0) return;
  Launch("CopyPartKernel", CudaBlocks(n), CopyPartKernel, n, part_row, whole_row, offset,
         into_whole, from, to);
}

}  // namespace demi
