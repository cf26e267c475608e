#include "demi/layers/part_copy.hpp"

#include "demi/util/math.hpp"

namespace demi {

namespace {

const float* Values(const Blob& blob, BlobField field, Device device) {
  return field == BlobField::kData ? blob.data_on(device) : blob.diff_on(device);
}

float* MutableValues(Blob* blob, BlobField field, Device device) {
  return field == BlobField::kData ? blob->mutable_data_on(device) : blob->mutable_diff_on(device);
}

/// Moves one part, of `rows` rows of part_row floats, to or from column
/// `offset` of the whole's rows of whole_row floats.
void CopyPart(Device device, int64_t rows, int64_t part_row, int64_t whole_row, int64_t offset,
              bool into_whole, const float* from, float* to) {
#ifndef CPU_ONLY
  if (device == Device::kGPU) {
    return GpuCopyPart(rows * part_row, part_row, whole_row, offset, into_whole, from, to);
  }
#endif
  for (int64_t n = 0; n < rows; ++n) {
    if (into_whole) {
      Copy(part_row, from + n * part_row, to + n * whole_row + offset);
    } else {
      Copy(part_row, from + n * whole_row + offset, to + n * part_row);
    }
  }
}

}  // namespace

void GatherParts(Device device, int axis, BlobField field, const std::vector<Blob*>& parts,
                 Blob* whole) {
  const int64_t rows = whole->count(0, axis);
  const int64_t inner = whole->count(axis + 1);
  const int64_t whole_row = whole->shape(axis) * inner;
  float* to = MutableValues(whole, field, device);
  int64_t offset = 0;  // of this part's row within a row of the whole
  for (const Blob* part : parts) {
    const int64_t part_row = part->shape(axis) * inner;
    CopyPart(device, rows, part_row, whole_row, offset, true, Values(*part, field, device), to);
    offset += part_row;
  }
}

void ScatterParts(Device device, int axis, BlobField field, const Blob& whole,
                  const std::vector<Blob*>& parts, const std::vector<bool>& wanted) {
  const int64_t rows = whole.count(0, axis);
  const int64_t inner = whole.count(axis + 1);
  const int64_t whole_row = whole.shape(axis) * inner;
  const float* from = Values(whole, field, device);
  int64_t offset = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const int64_t part_row = parts[i]->shape(axis) * inner;
    if (wanted[i]) {
      CopyPart(device, rows, part_row, whole_row, offset, false, from,
               MutableValues(parts[i], field, device));
    }
    offset += part_row;
  }
}

}  // namespace demi
