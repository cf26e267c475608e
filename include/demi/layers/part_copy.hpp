#ifndef DEMI_LAYERS_PART_COPY_HPP_
#define DEMI_LAYERS_PART_COPY_HPP_

// The one copy of Concat and Slice: a whole blob holds its parts side by side
// along `axis`, so each of its count(0, axis) rows is every part's row in
// turn (a part's row is shape(axis) * count(axis + 1) floats). Gather writes
// the parts into the whole (Concat's Forward, Slice's Backward); Scatter
// reads them out of it (Slice's Forward, Concat's Backward). Both run on
// `device` and move the data or, with BlobField::kDiff, the gradients, of
// blobs stored in FLOAT, BFLOAT16 or FLOAT16 (every blob of one type).
// With `channels_last` (axis 1 of 4-D blobs stored NHWC: Blob::channels_last())
// a row is one pixel, each part's channels side by side in it.

#include <cstdint>
#include <vector>

#include "demi/blob.hpp"

namespace demi {

enum class BlobField { kData, kDiff };

void GatherParts(Device device, int axis, BlobField field, const std::vector<Blob*>& parts,
                 Blob* whole, bool channels_last = false);
/// Fills only the parts i with wanted[i].
void ScatterParts(Device device, int axis, BlobField field, const Blob& whole,
                  const std::vector<Blob*>& parts, const std::vector<bool>& wanted,
                  bool channels_last = false);

#ifndef CPU_ONLY
/// The kernel's launcher (part_copy.cu): moves the n elements (of
/// `element_bytes`, 4 or 2) of a part to (into_whole) or from their place in
/// the whole, which has rows of whole_row elements with the part's rows of
/// part_row elements at `offset`.
void GpuCopyPart(int64_t n, int64_t part_row, int64_t whole_row, int64_t offset, bool into_whole,
                 size_t element_bytes, const void* from, void* to);
#endif

}  // namespace demi

#endif  // DEMI_LAYERS_PART_COPY_HPP_
