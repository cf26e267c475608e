#include "demi/layers/part_copy.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// Part element k is column k % part_row of row k / part_row, which sits at
/// row * whole_row + offset + column in the whole. E moves an element's bits.
template <typename E>
__global__ void CopyPartKernel(int64_t n, int64_t part_row, int64_t whole_row, int64_t offset,
                               bool into_whole, const E* from, E* to) {
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
                 size_t element_bytes, const void* from, void* to) {
  if (n == 0) return;
  if (element_bytes == sizeof(float)) {
    Launch("CopyPartKernel", CudaBlocks(n), CopyPartKernel<float>, n, part_row, whole_row, offset,
           into_whole, static_cast<const float*>(from), static_cast<float*>(to));
  } else {
    Launch("CopyPartKernel", CudaBlocks(n), CopyPartKernel<uint16_t>, n, part_row, whole_row,
           offset, into_whole, static_cast<const uint16_t*>(from), static_cast<uint16_t*>(to));
  }
}

}  // namespace demi
