#ifndef DEMI_TESTS_HDF5_TEST_UTIL_HPP_
#define DEMI_TESTS_HDF5_TEST_UTIL_HPP_

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace demi {

/// A dataset to write into a test fixture: float values stored as `type`
/// (H5T_NATIVE_FLOAT, H5T_NATIVE_INT, ...; converted by HDF5).
struct H5Dataset {
  std::string name;
  std::vector<hsize_t> shape;
  std::vector<double> values;
  hid_t type = H5T_NATIVE_FLOAT;
};

/// Writes `datasets` to a new HDF5 file with the C API directly, so the
/// fixtures do not depend on the code under test.
inline void WriteH5(const std::string& path, const std::vector<H5Dataset>& datasets) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0) << path;
  for (const H5Dataset& d : datasets) {
    const hid_t space = d.shape.empty() ? H5Screate(H5S_SCALAR)
                                        : H5Screate_simple(static_cast<int>(d.shape.size()),
                                                           d.shape.data(), nullptr);
    const hid_t dataset =
        H5Dcreate2(file, d.name.c_str(), d.type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(dataset, 0) << d.name;
    if (!d.values.empty()) {
      ASSERT_GE(
          H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d.values.data()), 0);
    }
    H5Dclose(dataset);
    H5Sclose(space);
  }
  H5Fclose(file);
}

/// Reads dataset `name` of `path` as doubles with the C API; `shape` gets
/// its dimensions.
inline std::vector<double> ReadH5(const std::string& path, const std::string& name,
                                  std::vector<hsize_t>* shape) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(file, 0) << path;
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  EXPECT_GE(dataset, 0) << name;
  const hid_t space = H5Dget_space(dataset);
  shape->assign(H5Sget_simple_extent_ndims(space), 0);
  H5Sget_simple_extent_dims(space, shape->data(), nullptr);
  std::vector<double> values(H5Sget_simple_extent_npoints(space));
  H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Sclose(space);
  H5Dclose(dataset);
  H5Fclose(file);
  return values;
}

}  // namespace demi

#endif  // DEMI_TESTS_HDF5_TEST_UTIL_HPP_
