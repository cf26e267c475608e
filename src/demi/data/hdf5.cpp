#include "demi/data/hdf5.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <type_traits>

#include "demi/common.hpp"
#include "demi/util/io.hpp"

namespace demi {

static_assert(std::is_same_v<hid_t, int64_t>, "Hdf5Appender keeps a hid_t as int64_t");

namespace {

/// Closes an HDF5 handle (file, dataset, dataspace, ...) when it goes out of
/// scope.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  /// Hands the handle over: it is not closed here.
  hid_t release() {
    const hid_t id = id_;
    id_ = -1;
    return id;
  }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/// HDF5 prints its error stack on every failed call; our errors say what
/// failed, so its printing is turned off once (the library is threadsafe and
/// the setting is per thread, hence on each thread that calls in).
void Quiet() {
  thread_local bool quiet = false;
  if (!quiet) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    quiet = true;
  }
}

/// `hint` ends the error where the file does not open.
Handle OpenFile(const std::string& path, const char* hint = "; check the path in the list file") {
  Quiet();
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  DEMI_CHECK(file.ok(), "cannot open HDF5 file '", path, "': it is missing or not an HDF5 file",
             hint);
  return file;
}

/// Opens dataset `name` and checks it is numeric (and, unless
/// `allow_scalar`, of rank 1 or more); returns its shape.
std::vector<int64_t> OpenDataset(const Handle& file, const std::string& path,
                                 const std::string& name, hid_t* dataset,
                                 bool allow_scalar = false) {
  DEMI_CHECK(H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) > 0, "HDF5 file '", path,
             "' has no dataset '", name, "': the layer's tops name the datasets it reads");
  *dataset = H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT);
  DEMI_CHECK(*dataset >= 0, "HDF5 file '", path, "': '", name, "' is not a dataset");
  Handle type(H5Dget_type(*dataset), H5Tclose);
  const H5T_class_t type_class = H5Tget_class(type.get());
  DEMI_CHECK(type_class == H5T_INTEGER || type_class == H5T_FLOAT, "HDF5 file '", path,
             "': dataset '", name, "' is not numeric; store integers or floats");
  Handle space(H5Dget_space(*dataset), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  DEMI_CHECK(rank >= 1 || (allow_scalar && rank == 0), "HDF5 file '", path, "': dataset '", name,
             "' is a scalar; its first axis must be the batch axis (rank 1 or more)");
  std::vector<hsize_t> dims(rank);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return std::vector<int64_t>(dims.begin(), dims.end());
}

}  // namespace

std::vector<Hdf5ListEntry> ReadHdf5List(const std::string& path) {
  std::ifstream in(path);
  DEMI_CHECK(in.good(), "cannot open HDF5 list '", path, "': ", std::strerror(errno));
  std::vector<Hdf5ListEntry> entries;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const size_t last = line.find_last_not_of(" \t\r");
    entries.push_back({line.substr(first, last - first + 1), number});
  }
  DEMI_CHECK(!in.bad(), "error reading HDF5 list '", path, "'");
  DEMI_CHECK(!entries.empty(), "HDF5 list '", path, "' is empty: it names no .h5 file");
  return entries;
}

std::vector<std::string> Hdf5GroupMembers(const std::string& path, const std::string& group) {
  Handle file = OpenFile(path, "");
  DEMI_CHECK(H5Lexists(file.get(), group.c_str(), H5P_DEFAULT) > 0, "HDF5 file '", path,
             "' has no group '", group, "'");
  Handle opened(H5Gopen2(file.get(), group.c_str(), H5P_DEFAULT), H5Gclose);
  DEMI_CHECK(opened.ok(), "HDF5 file '", path, "': '", group, "' is not a group");
  H5G_info_t info;
  DEMI_CHECK(H5Gget_info(opened.get(), &info) >= 0, "HDF5 file '", path, "': cannot read group '",
             group, "'");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t length = H5Lget_name_by_idx(opened.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i,
                                              nullptr, 0, H5P_DEFAULT);
    DEMI_CHECK(length >= 0, "HDF5 file '", path, "': cannot read member ", i, " of '", group, "'");
    std::string name(length + 1, '\0');
    DEMI_CHECK(H5Lget_name_by_idx(opened.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                                  name.size(), H5P_DEFAULT) == length,
               "HDF5 file '", path, "': cannot read member ", i, " of '", group, "'");
    name.resize(length);
    names.push_back(std::move(name));
  }
  return names;
}

std::vector<int64_t> Hdf5DatasetShape(const std::string& path, const std::string& name) {
  Handle file = OpenFile(path);
  hid_t id = -1;
  std::vector<int64_t> shape = OpenDataset(file, path, name, &id);
  Handle dataset(id, H5Dclose);
  return shape;
}

bool IsHdf5File(const std::string& path) {
  Quiet();
  return H5Fis_hdf5(path.c_str()) > 0;
}

std::vector<int64_t> ReadHdf5Dataset(const std::string& path, const std::string& name,
                                     std::vector<float>* values, bool allow_scalar) {
  Handle file = OpenFile(path);
  hid_t id = -1;
  std::vector<int64_t> shape = OpenDataset(file, path, name, &id, allow_scalar);
  Handle dataset(id, H5Dclose);
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  values->resize(count);
  if (count == 0) return shape;
  DEMI_CHECK(
      H5Dread(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values->data()) >= 0,
      "HDF5 file '", path, "': reading dataset '", name, "' as floats failed");
  return shape;
}

Hdf5Appender::Hdf5Appender(const std::string& path) : path_(path) {
  Quiet();
  file_ = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  DEMI_CHECK(file_ >= 0, "cannot create HDF5 file '", path,
             "': check that its directory exists and is writable");
}

Hdf5Appender::~Hdf5Appender() {
  if (file_ >= 0) H5Fclose(file_);
}

void Hdf5Appender::Append(const std::string& name, const std::vector<int64_t>& shape,
                          const float* values) {
  Quiet();
  DEMI_CHECK(!shape.empty(), "HDF5 file '", path_, "': dataset '", name,
             "' cannot take a 0-axis blob; give it at least a batch axis");
  const int rank = static_cast<int>(shape.size());
  std::vector<hsize_t> rows(shape.begin(), shape.end());
  hid_t id = -1;
  std::vector<hsize_t> old(rank, 0);
  if (H5Lexists(file_, name.c_str(), H5P_DEFAULT) > 0) {
    id = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
    Handle space(H5Dget_space(id), H5Sclose);
    DEMI_CHECK(H5Sget_simple_extent_ndims(space.get()) == rank, "HDF5 file '", path_,
               "': rows appended to dataset '", name, "' must keep its rank");
    H5Sget_simple_extent_dims(space.get(), old.data(), nullptr);
    for (int axis = 1; axis < rank; ++axis) {
      DEMI_CHECK(old[axis] == rows[axis], "HDF5 file '", path_, "': rows appended to dataset '",
                 name, "' must keep its shape; axis ", axis, " was ", old[axis], ", now ",
                 rows[axis]);
    }
  } else {
    // Extensible along axis 0, chunked by the first append's rows.
    std::vector<hsize_t> max = rows;
    max[0] = H5S_UNLIMITED;
    std::vector<hsize_t> empty = rows;
    empty[0] = 0;
    std::vector<hsize_t> chunk = rows;
    chunk[0] = std::max<hsize_t>(rows[0], 1);
    Handle space(H5Screate_simple(rank, empty.data(), max.data()), H5Sclose);
    Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_chunk(create.get(), rank, chunk.data());
    id = H5Dcreate2(file_, name.c_str(), H5T_NATIVE_FLOAT, space.get(), H5P_DEFAULT, create.get(),
                    H5P_DEFAULT);
  }
  DEMI_CHECK(id >= 0, "HDF5 file '", path_, "': cannot create or open dataset '", name, "'");
  Handle dataset(id, H5Dclose);
  std::vector<hsize_t> grown = rows;
  grown[0] = old[0] + rows[0];
  DEMI_CHECK(H5Dset_extent(dataset.get(), grown.data()) >= 0, "HDF5 file '", path_,
             "': cannot grow dataset '", name, "'");
  if (rows[0] == 0) return;
  Handle file_space(H5Dget_space(dataset.get()), H5Sclose);
  std::vector<hsize_t> start(rank, 0);
  start[0] = old[0];
  H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, rows.data(),
                      nullptr);
  Handle memory_space(H5Screate_simple(rank, rows.data(), nullptr), H5Sclose);
  DEMI_CHECK(H5Dwrite(dataset.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                      H5P_DEFAULT, values) >= 0,
             "HDF5 file '", path_, "': writing dataset '", name, "' failed (disk full?)");
  H5Fflush(file_, H5F_SCOPE_LOCAL);
}

Hdf5FileImage::Hdf5FileImage() {
  Quiet();
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // In memory, growing 1 MiB at a time, never backed by a file of its own.
  DEMI_CHECK(access.ok() && H5Pset_fapl_core(access.get(), size_t{1} << 20, false) >= 0,
             "cannot set up an in-memory HDF5 file");
  // The core driver tells its files apart by name: one each.
  static std::atomic<uint64_t> images{0};
  const std::string name = StrCat("demitasse-image-", getpid(), "-", images++, ".h5");
  file_ = H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
  DEMI_CHECK(file_ >= 0, "cannot create an in-memory HDF5 file");
}

Hdf5FileImage::~Hdf5FileImage() {
  if (file_ >= 0) H5Fclose(file_);
}

namespace {

/// A creation property list of `kind` (H5P_GROUP_CREATE, H5P_DATASET_CREATE)
/// that keeps no modification time: the same contents make the same bytes.
Handle UntimedCreation(hid_t kind) {
  Handle create(H5Pcreate(kind), H5Pclose);
  DEMI_CHECK(create.ok() && H5Pset_obj_track_times(create.get(), false) >= 0,
             "cannot set up HDF5 object creation");
  return create;
}

/// Makes group `name` of `file` unless it exists, and the groups above it
/// (each untimed, where HDF5's intermediate groups would keep a time).
void MakeGroups(hid_t file, const std::string& name) {
  size_t slash = 0;
  do {
    slash = name.find('/', slash + 1);
    const std::string group = name.substr(0, slash);
    if (group.empty()) continue;
    if (H5Lexists(file, group.c_str(), H5P_DEFAULT) > 0) {
      Handle existing(H5Gopen2(file, group.c_str(), H5P_DEFAULT), H5Gclose);
      DEMI_CHECK(existing.ok(), "HDF5 name '", group, "' is a dataset already, so it cannot be a ",
                 "group too (layers named 'x' and 'x/1' collide in Caffe's HDF5 layout)");
      continue;
    }
    const Handle create = UntimedCreation(H5P_GROUP_CREATE);
    Handle made(H5Gcreate2(file, group.c_str(), H5P_DEFAULT, create.get(), H5P_DEFAULT), H5Gclose);
    DEMI_CHECK(made.ok(), "cannot make HDF5 group '", group, "'");
  } while (slash != std::string::npos);
}

/// Makes dataset `name` of `type` over `space` (and the groups above it) and
/// writes `values` (in `memory_type`) to it.
void AddDataset(hid_t file, const std::string& name, hid_t type, hid_t space, hid_t memory_type,
                const void* values) {
  const size_t parent = name.rfind('/');
  if (parent != std::string::npos && parent > 0) MakeGroups(file, name.substr(0, parent));
  const Handle create = UntimedCreation(H5P_DATASET_CREATE);
  Handle dataset(
      H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, create.get(), H5P_DEFAULT),
      H5Dclose);
  DEMI_CHECK(dataset.ok(), "cannot make HDF5 dataset '", name, "' (is the name taken?)");
  DEMI_CHECK(H5Dwrite(dataset.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0,
             "cannot write HDF5 dataset '", name, "'");
}

}  // namespace

void Hdf5FileImage::AddGroup(const std::string& name) {
  Quiet();
  MakeGroups(file_, name);
}

void Hdf5FileImage::AddFloats(const std::string& name, const std::vector<int64_t>& shape,
                              const float* values) {
  Quiet();
  const std::vector<hsize_t> dims(shape.begin(), shape.end());
  Handle space(shape.empty()
                   ? H5Screate(H5S_SCALAR)
                   : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
               H5Sclose);
  AddDataset(file_, name, H5T_IEEE_F32LE, space.get(), H5T_NATIVE_FLOAT, values);
}

void Hdf5FileImage::AddInt(const std::string& name, int value) {
  Quiet();
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  AddDataset(file_, name, H5T_NATIVE_INT, space.get(), H5T_NATIVE_INT, &value);
}

void Hdf5FileImage::AddString(const std::string& name, const std::string& value) {
  Quiet();
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), value.size() + 1);
  H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  AddDataset(file_, name, type.get(), space.get(), type.get(), value.c_str());
}

void Hdf5FileImage::AddBytes(const std::string& name, const std::string& bytes) {
  Quiet();
  const hsize_t size = bytes.size();
  Handle space(H5Screate_simple(1, &size, nullptr), H5Sclose);
  AddDataset(file_, name, H5T_STD_U8LE, space.get(), H5T_NATIVE_UINT8, bytes.data());
}

void Hdf5FileImage::Save(const std::string& path) const {
  Quiet();
  DEMI_CHECK(H5Fflush(file_, H5F_SCOPE_GLOBAL) >= 0, "cannot write '", path,
             "': flushing the HDF5 image failed");
  const ssize_t size = H5Fget_file_image(file_, nullptr, 0);
  DEMI_CHECK(size > 0, "cannot write '", path, "': HDF5 gave no file image");
  std::string image(static_cast<size_t>(size), '\0');
  DEMI_CHECK(H5Fget_file_image(file_, image.data(), image.size()) == size, "cannot write '", path,
             "': HDF5 gave a short file image");
  WriteFileAtomically(path, image);
}

bool Hdf5IsGroup(const std::string& path, const std::string& name) {
  Handle file = OpenFile(path, "");
  Handle group(H5Gopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Gclose);
  return group.ok();
}

bool Hdf5HasMember(const std::string& path, const std::string& name) {
  Handle file = OpenFile(path, "");
  // Each link on the way must exist for H5Lexists to look further.
  size_t slash = 0;
  while ((slash = name.find('/', slash + 1)) != std::string::npos) {
    if (H5Lexists(file.get(), name.substr(0, slash).c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) > 0;
}

namespace {

/// A scalar or 1-D dataset, open with its file.
struct PlainDataset {
  Handle file;
  Handle dataset;
  hsize_t count = 1;  ///< its elements
};

/// Opens scalar or 1-D dataset `name` of `path` and checks its type's class
/// is `expected` (`what` names it in the error).
PlainDataset OpenPlainDataset(const std::string& path, const std::string& name,
                              H5T_class_t expected, const char* what) {
  Handle file = OpenFile(path, "");
  DEMI_CHECK(H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) > 0, "HDF5 file '", path,
             "' has no dataset '", name, "'");
  Handle dataset(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  DEMI_CHECK(dataset.ok(), "HDF5 file '", path, "': '", name, "' is not a dataset");
  Handle type(H5Dget_type(dataset.get()), H5Tclose);
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  hsize_t count = 1;
  if (rank == 1) H5Sget_simple_extent_dims(space.get(), &count, nullptr);
  DEMI_CHECK(H5Tget_class(type.get()) == expected && (rank == 0 || rank == 1), "HDF5 file '", path,
             "': dataset '", name, "' is not ", what);
  return PlainDataset{std::move(file), std::move(dataset), count};
}

}  // namespace

int64_t ReadHdf5Int(const std::string& path, const std::string& name) {
  const PlainDataset plain = OpenPlainDataset(path, name, H5T_INTEGER, "one integer");
  DEMI_CHECK(plain.count == 1, "HDF5 file '", path, "': dataset '", name, "' is not one integer");
  int64_t value = 0;
  DEMI_CHECK(
      H5Dread(plain.dataset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) >= 0,
      "HDF5 file '", path, "': reading dataset '", name, "' failed");
  return value;
}

std::string ReadHdf5String(const std::string& path, const std::string& name) {
  const PlainDataset plain = OpenPlainDataset(path, name, H5T_STRING, "one string");
  DEMI_CHECK(plain.count == 1, "HDF5 file '", path, "': dataset '", name, "' is not one string");
  const hid_t dataset = plain.dataset.get();
  Handle type(H5Dget_type(dataset), H5Tclose);
  if (H5Tis_variable_str(type.get()) > 0) {
    char* text = nullptr;
    Handle memory_type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory_type.get(), H5T_VARIABLE);
    DEMI_CHECK(H5Dread(dataset, memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) >= 0 &&
                   text != nullptr,
               "HDF5 file '", path, "': reading string '", name, "' failed");
    std::string value(text);
    H5free_memory(text);
    return value;
  }
  std::string value(H5Tget_size(type.get()), '\0');
  DEMI_CHECK(H5Dread(dataset, type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, value.data()) >= 0,
             "HDF5 file '", path, "': reading string '", name, "' failed");
  value.resize(std::strlen(value.c_str()));  // up to its NUL, if padded with them
  return value;
}

std::string ReadHdf5Bytes(const std::string& path, const std::string& name) {
  const PlainDataset plain = OpenPlainDataset(path, name, H5T_INTEGER, "bytes");
  std::string bytes(plain.count, '\0');
  if (plain.count == 0) return bytes;
  DEMI_CHECK(H5Dread(plain.dataset.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                     bytes.data()) >= 0,
             "HDF5 file '", path, "': reading dataset '", name, "' failed");
  return bytes;
}

}  // namespace demi
