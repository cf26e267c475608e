#include "demi/blob.hpp"

#include <cmath>
#include <limits>

#include "demi/util/checked_math.hpp"
#include "demi/util/math.hpp"

namespace demi {

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? " " : "") << shape[i];
  // The count is shown only when it fits: this names shapes that overflow.
  int64_t count = 0;
  if (CountOfDims(shape, &count)) {
    out << " (" << count << ")";
  } else {
    out << " (count overflows)";
  }
  return out.str();
}

std::vector<int64_t> ShapeFromProto(const BlobShape& shape) {
  return std::vector<int64_t>(shape.dim().begin(), shape.dim().end());
}

std::vector<int64_t> ShapeFromProto(const BlobProto& proto) {
  if (proto.has_shape()) return ShapeFromProto(proto.shape());
  // Legacy 4-D dims: Caffe reads them as num, channels, height, width.
  return {proto.num(), proto.channels(), proto.height(), proto.width()};
}

Blob::Blob() : data_(std::make_shared<SyncedMemory>()), diff_(std::make_shared<SyncedMemory>()) {}

Blob::Blob(const std::vector<int64_t>& shape) : Blob() { Reshape(shape); }

void Blob::Reshape(const std::vector<int64_t>& shape) {
  DEMI_CHECK(shape.size() <= static_cast<size_t>(kMaxBlobAxes), "blob shape ", ShapeString(shape),
             " has more than ", kMaxBlobAxes, " axes");
  for (int64_t dim : shape) {
    DEMI_CHECK(dim >= 0, "blob shape ", ShapeString(shape), " has a negative dimension");
  }
  // The count, and the bytes of data and diff together, must be addressable.
  int64_t count = 0;
  size_t bytes = 0;
  const bool overflows =
      !CountOfDims(shape, &count) ||
      __builtin_mul_overflow(static_cast<size_t>(count), element_bytes(), &bytes) ||
      bytes > std::numeric_limits<size_t>::max() / 2;
  DEMI_CHECK(!overflows, "blob shape ", ShapeString(shape),
             " overflows: its count or bytes do not fit in 64 bits");
  shape_ = shape;
  count_ = count;
  data_->Resize(bytes);
  diff_->Resize(bytes);
}

void Blob::Reshape(const BlobShape& shape) { Reshape(ShapeFromProto(shape)); }

void Blob::Reshape(int64_t num, int64_t channels, int64_t height, int64_t width) {
  Reshape(std::vector<int64_t>{num, channels, height, width});
}

int64_t Blob::count(int start_axis, int end_axis) const {
  CHECK_LE(start_axis, end_axis);
  CHECK_GE(start_axis, 0);
  CHECK_LE(end_axis, num_axes());
  // Reshape checked the whole product, so no partial product can wrap.
  int64_t count = 1;
  for (int i = start_axis; i < end_axis; ++i) count *= shape_[i];
  return count;
}

int Blob::CanonicalAxisIndex(int axis) const {
  DEMI_CHECK(axis >= -num_axes() && axis < num_axes(), "axis ", axis,
             " is out of range for a blob of shape ", shape_string());
  return axis < 0 ? axis + num_axes() : axis;
}

std::string Blob::shape_string() const { return ShapeString(shape_); }

int64_t Blob::LegacyShape(int index) const {
  DEMI_CHECK(num_axes() <= 4, "num, channels, height and width are for blobs of at most 4 axes; ",
             "this one has shape ", shape_string(), ": use shape instead");
  CHECK_GE(index, 0);
  CHECK_LT(index, 4);
  return index < num_axes() ? shape_[index] : 1;
}

int64_t Blob::offset(int64_t n, int64_t c, int64_t h, int64_t w) const {
  return ((n * channels() + c) * height() + h) * width() + w;
}

int64_t Blob::offset(const std::vector<int64_t>& indices) const {
  CHECK_LE(indices.size(), shape_.size());
  int64_t offset = 0;
  for (int i = 0; i < num_axes(); ++i) {
    offset *= shape_[i];
    if (static_cast<size_t>(i) < indices.size()) offset += indices[i];
  }
  return offset;
}

const float* Blob::cpu_data() const { return cpu_data_as<float>(); }
const float* Blob::cpu_diff() const { return cpu_diff_as<float>(); }
float* Blob::mutable_cpu_data() { return mutable_cpu_data_as<float>(); }
float* Blob::mutable_cpu_diff() { return mutable_cpu_diff_as<float>(); }
// The GPU runs FLOAT blobs only (no GPU engine stores 16 bits yet).
const float* Blob::gpu_data() const {
  CheckStorage(FLOAT);
  return static_cast<const float*>(data_->gpu_data());
}
const float* Blob::gpu_diff() const {
  CheckStorage(FLOAT);
  return static_cast<const float*>(diff_->gpu_data());
}
float* Blob::mutable_gpu_data() {
  CheckStorage(FLOAT);
  return static_cast<float*>(data_->mutable_gpu_data());
}
float* Blob::mutable_gpu_diff() {
  CheckStorage(FLOAT);
  return static_cast<float*>(diff_->mutable_gpu_data());
}

void Blob::ThrowStorageMismatch(Type asked) const {
  throw Error(StrCat("a blob of shape ", shape_string(), " is stored in ", Type_Name(storage_type_),
                     ", not ", Type_Name(asked),
                     " (a net stores the blobs between 16-bit layers in 16 bits; keep_blob "
                     "keeps one FLOAT)"));
}

void Blob::set_storage_type(Type type) {
  DEMI_CHECK(type == FLOAT || type == BFLOAT16 || type == FLOAT16,
             "a blob is stored in FLOAT, BFLOAT16 or FLOAT16, not ", Type_Name(type));
  if (type == storage_type_) return;
  storage_type_ = type;
  // The same count in the new element size (a blob never shaped stays empty).
  data_->Resize(static_cast<size_t>(count_) * element_bytes());
  diff_->Resize(static_cast<size_t>(count_) * element_bytes());
}

const float* Blob::data_on(Device device) const {
  return device == Device::kGPU ? gpu_data() : cpu_data();
}
const float* Blob::diff_on(Device device) const {
  return device == Device::kGPU ? gpu_diff() : cpu_diff();
}
float* Blob::mutable_data_on(Device device) {
  return device == Device::kGPU ? mutable_gpu_data() : mutable_cpu_data();
}
float* Blob::mutable_diff_on(Device device) {
  return device == Device::kGPU ? mutable_gpu_diff() : mutable_cpu_diff();
}

void Blob::CheckSharable(const Blob& other, const char* what) const {
  DEMI_CHECK(count_ == other.count() && storage_type_ == other.storage_type(), what,
             " needs equal counts and storage types: this blob has shape ", shape_string(), " in ",
             Type_Name(storage_type_), ", the other shape ", other.shape_string(), " in ",
             Type_Name(other.storage_type()));
}

void Blob::ShareData(const Blob& other) {
  CheckSharable(other, "ShareData");
  data_ = other.data();
}

void Blob::ShareDiff(const Blob& other) {
  CheckSharable(other, "ShareDiff");
  diff_ = other.diff();
}

void Blob::CopyFrom(const Blob& source, bool copy_diff, bool reshape) {
  if (source.shape() != shape_) {
    DEMI_CHECK(reshape, "cannot copy a blob of shape ", source.shape_string(),
               " into one of shape ", shape_string());
    ReshapeLike(source);
  }
  if (copy_diff) {
    Copy(count_, source.cpu_diff(), mutable_cpu_diff());
  } else {
    Copy(count_, source.cpu_data(), mutable_cpu_data());
  }
}

bool Blob::ShapeEquals(const BlobProto& proto) const {
  if (proto.has_shape()) return ShapeFromProto(proto.shape()) == shape_;
  // Legacy dims compare against the blob's shape padded on the left with 1s,
  // which is how Caffe treats a 4-D legacy proto against an N-D blob.
  if (num_axes() > 4) return false;
  std::vector<int64_t> padded(4 - shape_.size(), 1);
  padded.insert(padded.end(), shape_.begin(), shape_.end());
  return padded == ShapeFromProto(proto);
}

void Blob::FromProto(const BlobProto& proto, bool reshape) {
  std::vector<int64_t> shape = ShapeFromProto(proto);
  if (reshape) {
    Reshape(shape);
  } else {
    DEMI_CHECK(ShapeEquals(proto), "blob shape ", shape_string(),
               " does not match the stored shape ", ShapeString(shape));
  }
  const bool as_double = proto.double_data_size() > 0;
  const int64_t stored = as_double ? proto.double_data_size() : proto.data_size();
  DEMI_CHECK(stored == count_, "stored blob has ", stored, " values, its shape ",
             ShapeString(shape), " needs ", count_);
  float* data = mutable_cpu_data();
  for (int64_t i = 0; i < count_; ++i) {
    data[i] = as_double ? static_cast<float>(proto.double_data(i)) : proto.data(i);
  }
  const int64_t diffs = proto.double_diff_size() > 0 ? proto.double_diff_size() : proto.diff_size();
  if (diffs == count_ && diffs > 0) {
    float* diff = mutable_cpu_diff();
    for (int64_t i = 0; i < count_; ++i) {
      diff[i] =
          proto.double_diff_size() > 0 ? static_cast<float>(proto.double_diff(i)) : proto.diff(i);
    }
  }
}

void Blob::ToProto(BlobProto* proto, bool write_diff) const {
  proto->Clear();
  for (int64_t dim : shape_) proto->mutable_shape()->add_dim(dim);
  const float* data = cpu_data();
  proto->mutable_data()->Reserve(static_cast<int>(count_));
  for (int64_t i = 0; i < count_; ++i) proto->add_data(data[i]);
  if (write_diff) {
    const float* diff = cpu_diff();
    for (int64_t i = 0; i < count_; ++i) proto->add_diff(diff[i]);
  }
}

void Blob::Update() { Axpy(count_, -1.0f, cpu_diff(), mutable_cpu_data()); }

namespace {

/// The sum of |x|, or of x^2, over `count` values stored as `type`.
double StoredSum(int64_t count, Type type, const void* values, bool squares) {
  if (count == 0) return 0;
  if (type == FLOAT) {
    const auto* x = static_cast<const float*>(values);
    return squares ? Sumsq(count, x) : Asum(count, x);
  }
  return VisitStorageType(type, [&](auto tag) {
    const auto* x = static_cast<const decltype(tag)*>(values);
    double sum = 0;
    for (int64_t i = 0; i < count; ++i) {
      const double value = static_cast<float>(x[i]);
      sum += squares ? value * value : std::fabs(value);
    }
    return sum;
  });
}

}  // namespace

double Blob::asum_data() const {
  return StoredSum(count_, storage_type_, count_ ? data_->cpu_data() : nullptr, false);
}
double Blob::asum_diff() const {
  return StoredSum(count_, storage_type_, count_ ? diff_->cpu_data() : nullptr, false);
}
double Blob::sumsq_data() const {
  return StoredSum(count_, storage_type_, count_ ? data_->cpu_data() : nullptr, true);
}
double Blob::sumsq_diff() const {
  return StoredSum(count_, storage_type_, count_ ? diff_->cpu_data() : nullptr, true);
}
void Blob::scale_data(float factor) {
  if (count_) Scal(count_, factor, mutable_cpu_data());
}
void Blob::scale_diff(float factor) {
  if (count_) Scal(count_, factor, mutable_cpu_diff());
}

}  // namespace demi
