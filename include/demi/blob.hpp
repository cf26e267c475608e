#ifndef DEMI_BLOB_HPP_
#define DEMI_BLOB_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "demi/common.hpp"
#include "demi/proto/demi.pb.h"
#include "demi/syncedmem.hpp"
#include "demi/util/bfloat16.hpp"
#include "demi/util/float16.hpp"

namespace demi {

/// Caffe's limit on the number of axes of a blob.
constexpr int kMaxBlobAxes = 32;

/// The storage type (Blob::storage_type()) of the C++ element type T.
template <typename T>
constexpr Type StorageTypeOf();
template <>
constexpr Type StorageTypeOf<float>() {
  return FLOAT;
}
template <>
constexpr Type StorageTypeOf<bfloat16>() {
  return BFLOAT16;
}
template <>
constexpr Type StorageTypeOf<float16>() {
  return FLOAT16;
}

/// Calls `f` with a value of the C++ type that stores `type` (float,
/// bfloat16 or float16), for code written once over the stored type:
/// `VisitStorageType(blob.storage_type(), [&](auto tag) { using T =
/// decltype(tag); ... })`.
template <typename F>
decltype(auto) VisitStorageType(Type type, F&& f) {
  if (type == BFLOAT16) return f(bfloat16{});
  if (type == FLOAT16) return f(float16{});
  return f(float{});
}

/// @brief An N-D array with a `data` and a `diff` (gradient) SyncedMemory
/// each, as in Caffe: of floats, or of bfloat16 or float16 where a net stores
/// a blob in 16 bits (storage_type()).
///
/// Reshape is capacity-aware through SyncedMemory: shrinking keeps the
/// allocation. Blobs can share data or diff memory (ShareData / ShareDiff),
/// and the memory planner binds their memories to views of one arena.
class Blob {
 public:
  Blob();
  explicit Blob(const std::vector<int64_t>& shape);
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;

  void Reshape(const std::vector<int64_t>& shape);
  void Reshape(const BlobShape& shape);
  void Reshape(int64_t num, int64_t channels, int64_t height, int64_t width);
  void ReshapeLike(const Blob& other) { Reshape(other.shape()); }

  const std::vector<int64_t>& shape() const { return shape_; }
  /// Dimension of `axis`; negative axes count from the end.
  int64_t shape(int axis) const { return shape_[CanonicalAxisIndex(axis)]; }
  int num_axes() const { return static_cast<int>(shape_.size()); }
  int64_t count() const { return count_; }
  /// Product of dimensions in [start_axis, end_axis).
  int64_t count(int start_axis, int end_axis) const;
  int64_t count(int start_axis) const { return count(start_axis, num_axes()); }
  /// Maps an axis in [-num_axes, num_axes) to [0, num_axes), or throws.
  int CanonicalAxisIndex(int axis) const;
  std::string shape_string() const;

  // Legacy 4-D accessors: missing trailing axes read as 1.
  int64_t num() const { return LegacyShape(0); }
  int64_t channels() const { return LegacyShape(1); }
  int64_t height() const { return LegacyShape(2); }
  int64_t width() const { return LegacyShape(3); }
  int64_t LegacyShape(int index) const;

  int64_t offset(int64_t n, int64_t c = 0, int64_t h = 0, int64_t w = 0) const;
  int64_t offset(const std::vector<int64_t>& indices) const;

  float data_at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return cpu_data()[offset(n, c, h, w)];
  }
  float diff_at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return cpu_diff()[offset(n, c, h, w)];
  }

  /// The float accessors below are for FLOAT blobs: on a blob stored in
  /// another type they throw Error (code that reads storage_type() uses
  /// cpu_data_as<T>() or the raw bytes).
  const float* cpu_data() const;
  const float* cpu_diff() const;
  float* mutable_cpu_data();
  float* mutable_cpu_diff();
  /// data or diff as elements of T, which must be the storage type.
  template <typename T>
  const T* cpu_data_as() const {
    CheckStorage(StorageTypeOf<T>());
    return static_cast<const T*>(data_->cpu_data());
  }
  template <typename T>
  const T* cpu_diff_as() const {
    CheckStorage(StorageTypeOf<T>());
    return static_cast<const T*>(diff_->cpu_data());
  }
  template <typename T>
  T* mutable_cpu_data_as() {
    CheckStorage(StorageTypeOf<T>());
    return static_cast<T*>(data_->mutable_cpu_data());
  }
  template <typename T>
  T* mutable_cpu_diff_as() {
    CheckStorage(StorageTypeOf<T>());
    return static_cast<T*>(diff_->mutable_cpu_data());
  }
  const float* gpu_data() const;
  const float* gpu_diff() const;
  float* mutable_gpu_data();
  float* mutable_gpu_diff();
  /// The cpu_ or gpu_ pointer for `device`: for a layer body written once for
  /// both devices (its math in util/device_math.hpp).
  const float* data_on(Device device) const;
  const float* diff_on(Device device) const;
  float* mutable_data_on(Device device);
  float* mutable_diff_on(Device device);

  /// The layout of data and diff: 1 is Caffe's dense row-major layout; b > 1
  /// is oneDNN's channel-blocked one (N x C/b x H x W x b, e.g. nChw16c) that
  /// a net gives the blobs passed only between layers able to read it (see
  /// Layer::blocked_layouts()), so no reorder runs between them. Such a blob
  /// holds the same count of floats; a net's inputs, outputs and keep_blob
  /// blobs always stay in Caffe's layout.
  ///
  /// On a GPU the block is all the channels (N x 1 x H x W x C: NHWC), for
  /// the blobs passed only between layers that read channels last (see
  /// Layer::channels_last_layouts()).
  int channel_block() const { return channel_block_; }
  void set_channel_block(int block) { channel_block_ = block; }
  /// A 4-D blob whose block is all its channels (more than one): NHWC.
  bool channels_last() const {
    return channel_block_ > 1 && num_axes() == 4 && channel_block_ == shape(1);
  }

  /// The type data and diff are stored in: FLOAT, or BFLOAT16 or FLOAT16 for
  /// the blobs a net passes only between layers that store that type (see
  /// Layer::narrow_blobs()), which hold count() two-byte elements. Setting
  /// it resizes both memories; a net's inputs, outputs and kept blobs, and
  /// params, stay FLOAT.
  Type storage_type() const { return storage_type_; }
  void set_storage_type(Type type);
  /// Bytes per element of storage_type().
  size_t element_bytes() const { return storage_type_ == FLOAT ? sizeof(float) : sizeof(uint16_t); }

  const std::shared_ptr<SyncedMemory>& data() const { return data_; }
  const std::shared_ptr<SyncedMemory>& diff() const { return diff_; }

  /// Makes this blob use `other`'s data (or diff) memory; counts and storage
  /// types must match.
  void ShareData(const Blob& other);
  void ShareDiff(const Blob& other);

  /// Copies data (or diff) from `source`; with `reshape`, takes its shape.
  void CopyFrom(const Blob& source, bool copy_diff = false, bool reshape = false);

  /// Loads shape and values from a BlobProto (BlobShape or legacy 4-D dims,
  /// float or double values).
  void FromProto(const BlobProto& proto, bool reshape = true);
  void ToProto(BlobProto* proto, bool write_diff = false) const;
  bool ShapeEquals(const BlobProto& proto) const;

  /// data -= diff (the plain gradient step the solver applies after scaling).
  void Update();
  /// Sums over data or diff, of any storage type.
  double asum_data() const;
  double asum_diff() const;
  double sumsq_data() const;
  double sumsq_diff() const;
  void scale_data(float factor);
  void scale_diff(float factor);

 private:
  /// Throws Error unless the blob is stored in `type`.
  void CheckStorage(Type type) const {
    if (type != storage_type_) ThrowStorageMismatch(type);
  }
  [[noreturn]] void ThrowStorageMismatch(Type asked) const;
  /// Throws Error unless `other` has this blob's count and storage type.
  void CheckSharable(const Blob& other, const char* what) const;

  std::vector<int64_t> shape_;
  int64_t count_ = 0;
  int channel_block_ = 1;
  Type storage_type_ = FLOAT;
  std::shared_ptr<SyncedMemory> data_;
  std::shared_ptr<SyncedMemory> diff_;
};

/// Reads a blob's shape from a proto that may use BlobShape or legacy dims.
std::vector<int64_t> ShapeFromProto(const BlobProto& proto);
std::vector<int64_t> ShapeFromProto(const BlobShape& shape);
std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace demi

#endif  // DEMI_BLOB_HPP_
