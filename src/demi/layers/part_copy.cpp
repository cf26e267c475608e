#include "demi/layers/part_copy.hpp"

#include <algorithm>
#include <type_traits>

#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

namespace {

/// The data or diff of `blob` as elements of T, its storage type, on
/// `device`.
template <typename T>
const T* Values(const Blob& blob, BlobField field, Device device) {
  if constexpr (std::is_same_v<T, float>) {
    return field == BlobField::kData ? blob.data_on(device) : blob.diff_on(device);
  } else {
    if (device == Device::kCPU) {
      return field == BlobField::kData ? blob.cpu_data_as<T>() : blob.cpu_diff_as<T>();
    }
    SyncedMemory& memory = field == BlobField::kData ? *blob.data() : *blob.diff();
    return static_cast<const T*>(memory.gpu_data());
  }
}

template <typename T>
T* MutableValues(Blob* blob, BlobField field, Device device) {
  if constexpr (std::is_same_v<T, float>) {
    return field == BlobField::kData ? blob->mutable_data_on(device)
                                     : blob->mutable_diff_on(device);
  } else {
    if (device == Device::kCPU) {
      return field == BlobField::kData ? blob->mutable_cpu_data_as<T>()
                                       : blob->mutable_cpu_diff_as<T>();
    }
    SyncedMemory& memory = field == BlobField::kData ? *blob->data() : *blob->diff();
    return static_cast<T*>(memory.mutable_gpu_data());
  }
}

/// Moves one part, of `rows` rows of part_row elements, to or from column
/// `offset` of the whole's rows of whole_row elements.
template <typename T>
void CopyPart(Device device, int64_t rows, int64_t part_row, int64_t whole_row, int64_t offset,
              bool into_whole, const T* from, T* to) {
#ifndef CPU_ONLY
  if (device == Device::kGPU) {
    return GpuCopyPart(rows * part_row, part_row, whole_row, offset, into_whole, sizeof(T), from,
                       to);
  }
#endif
  const auto row_from = [&](int64_t n) {
    return into_whole ? from + n * part_row : from + n * whole_row + offset;
  };
  const auto row_to = [&](int64_t n) {
    return into_whole ? to + n * whole_row + offset : to + n * part_row;
  };
  if (part_row >= kMinParallelWork) {  // a few long rows: threads share each
    for (int64_t n = 0; n < rows; ++n) Copy(part_row, row_from(n), row_to(n));
    return;
  }
  // Many short rows (channels last: a pixel's channels): threads take rows.
  ParallelFor(rows, GrainFor(part_row), [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) std::copy_n(row_from(n), part_row, row_to(n));
  });
}

/// The whole's rows and the elements per index of `axis` in one: in Caffe's
/// layout count(0, axis) rows of shape(axis) x count(axis + 1) elements;
/// channels last (axis 1), a row per pixel, its channels adjacent.
struct Rows {
  int64_t rows, inner;
};
Rows RowsOf(const Blob& whole, int axis, bool channels_last) {
  if (channels_last) return {whole.count(0, axis) * whole.count(axis + 1), 1};
  return {whole.count(0, axis), whole.count(axis + 1)};
}

template <typename T>
void GatherPartsOf(Device device, int axis, BlobField field, const std::vector<Blob*>& parts,
                   Blob* whole, bool channels_last) {
  const auto [rows, inner] = RowsOf(*whole, axis, channels_last);
  const int64_t whole_row = whole->shape(axis) * inner;
  T* to = MutableValues<T>(whole, field, device);
  int64_t offset = 0;  // of this part's row within a row of the whole
  for (const Blob* part : parts) {
    const int64_t part_row = part->shape(axis) * inner;
    CopyPart(device, rows, part_row, whole_row, offset, true, Values<T>(*part, field, device), to);
    offset += part_row;
  }
}

template <typename T>
void ScatterPartsOf(Device device, int axis, BlobField field, const Blob& whole,
                    const std::vector<Blob*>& parts, const std::vector<bool>& wanted,
                    bool channels_last) {
  const auto [rows, inner] = RowsOf(whole, axis, channels_last);
  const int64_t whole_row = whole.shape(axis) * inner;
  const T* from = Values<T>(whole, field, device);
  int64_t offset = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const int64_t part_row = parts[i]->shape(axis) * inner;
    if (wanted[i]) {
      CopyPart(device, rows, part_row, whole_row, offset, false, from,
               MutableValues<T>(parts[i], field, device));
    }
    offset += part_row;
  }
}

}  // namespace

void GatherParts(Device device, int axis, BlobField field, const std::vector<Blob*>& parts,
                 Blob* whole, bool channels_last) {
  VisitStorageType(whole->storage_type(), [&](auto tag) {
    GatherPartsOf<decltype(tag)>(device, axis, field, parts, whole, channels_last);
  });
}

void ScatterParts(Device device, int axis, BlobField field, const Blob& whole,
                  const std::vector<Blob*>& parts, const std::vector<bool>& wanted,
                  bool channels_last) {
  VisitStorageType(whole.storage_type(), [&](auto tag) {
    ScatterPartsOf<decltype(tag)>(device, axis, field, whole, parts, wanted, channels_last);
  });
}

}  // namespace demi
