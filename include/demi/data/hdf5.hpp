#ifndef DEMI_DATA_HDF5_HPP_
#define DEMI_DATA_HDF5_HPP_

#include <cstdint>
#include <string>
#include <vector>

namespace demi {

/// One entry of an HDF5 list file (HDF5Data's source): the path as written
/// and its line number (1-based), for messages.
struct Hdf5ListEntry {
  std::string path;
  int64_t line = 0;
};

/// Reads an HDF5 list: one .h5 path a line, surrounding blanks trimmed, blank
/// lines ignored; paths are used as written (relative ones from the working
/// directory, as in Caffe). A missing or empty list throws an Error naming it.
std::vector<Hdf5ListEntry> ReadHdf5List(const std::string& path);

/// The names of the members (groups, datasets) of group `group` of the HDF5
/// file `path`, sorted. Throws an Error naming the file if it does not open
/// or has no such group.
std::vector<std::string> Hdf5GroupMembers(const std::string& path, const std::string& group);

/// The shape of dataset `name` of the HDF5 file `path`, read without its
/// values. Throws an Error naming the file and dataset if the file does not
/// open, the dataset is missing, is not numeric, or is a scalar (rank 0).
std::vector<int64_t> Hdf5DatasetShape(const std::string& path, const std::string& name);

/// Reads dataset `name` of `path` into `values` as floats (HDF5 converts any
/// integer or floating type) and returns its shape; errors as above, but a
/// scalar is read (shape {}, one value) where `allow_scalar`: a 0-axis
/// param, as Caffe writes PReLU's shared slope.
std::vector<int64_t> ReadHdf5Dataset(const std::string& path, const std::string& name,
                                     std::vector<float>* values, bool allow_scalar = false);

/// Whether `path` is an HDF5 file (by its signature, not its name).
bool IsHdf5File(const std::string& path);

/// @brief Writes float datasets to one HDF5 file, created (or truncated) on
/// construction, that grow along their first axis: each Append adds rows to
/// the dataset of that name (made on its first Append, chunked and
/// extensible), and the file is flushed so readers see every row appended.
/// The rows of later Appends must have the first one's shape.
class Hdf5Appender {
 public:
  explicit Hdf5Appender(const std::string& path);
  ~Hdf5Appender();
  Hdf5Appender(const Hdf5Appender&) = delete;
  Hdf5Appender& operator=(const Hdf5Appender&) = delete;

  /// Appends shape[0] rows of shape[1:] from `values` to dataset `name`.
  void Append(const std::string& name, const std::vector<int64_t>& shape, const float* values);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int64_t file_ = -1;  ///< hid_t, kept out of this header
};

/// @brief An HDF5 file built in memory (HDF5's core driver) and written in
/// one go by Save, atomically: a temporary file, fsync and a rename, so a
/// crash leaves the previous file. Caffe's HDF5 weights and solver states.
/// Datasets and groups may be named by paths ("data/conv1/0"): the groups
/// on the way are made.
class Hdf5FileImage {
 public:
  Hdf5FileImage();
  ~Hdf5FileImage();
  Hdf5FileImage(const Hdf5FileImage&) = delete;
  Hdf5FileImage& operator=(const Hdf5FileImage&) = delete;

  /// A group, empty until something is written under it.
  void AddGroup(const std::string& name);
  /// A float32 dataset of `shape` (no axes: a scalar) holding `values`.
  void AddFloats(const std::string& name, const std::vector<int64_t>& shape, const float* values);
  /// A scalar int32 dataset, as Caffe's hdf5_save_int writes it.
  void AddInt(const std::string& name, int value);
  /// A scalar fixed-length, NUL-terminated string, as Caffe's hdf5_save_string.
  void AddString(const std::string& name, const std::string& value);
  /// A 1-D uint8 dataset holding `bytes`.
  void AddBytes(const std::string& name, const std::string& bytes);
  /// Writes the file to `path` atomically; `what` names it in errors.
  void Save(const std::string& path) const;

 private:
  int64_t file_ = -1;  ///< hid_t
};

/// Whether member `name` of the HDF5 file `path` is a group (not a dataset,
/// not missing).
bool Hdf5IsGroup(const std::string& path, const std::string& name);
/// Whether the HDF5 file `path` has a member (group or dataset) `name`.
bool Hdf5HasMember(const std::string& path, const std::string& name);
/// A scalar integer dataset (Caffe's hdf5_load_int).
int64_t ReadHdf5Int(const std::string& path, const std::string& name);
/// A scalar string dataset, fixed-length (Caffe's) or variable-length (h5py's).
std::string ReadHdf5String(const std::string& path, const std::string& name);
/// A 1-D uint8 dataset's bytes.
std::string ReadHdf5Bytes(const std::string& path, const std::string& name);

}  // namespace demi

#endif  // DEMI_DATA_HDF5_HPP_
