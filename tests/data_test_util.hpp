#ifndef DEMI_TESTS_DATA_TEST_UTIL_HPP_
#define DEMI_TESTS_DATA_TEST_UTIL_HPP_

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "demi/data/db.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

/// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "demi_test_XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  ASSERT_TRUE(out.good()) << path;
}

inline std::string Gzip(const std::string& bytes) {
  std::string out;
  google::protobuf::io::StringOutputStream sink(&out);
  google::protobuf::io::GzipOutputStream::Options options;
  options.format = google::protobuf::io::GzipOutputStream::GZIP;
  google::protobuf::io::GzipOutputStream gzip(&sink, options);
  void* chunk = nullptr;
  int size = 0;
  size_t done = 0;
  while (done < bytes.size() && gzip.Next(&chunk, &size)) {
    const size_t n = std::min(bytes.size() - done, static_cast<size_t>(size));
    std::copy(bytes.data() + done, bytes.data() + done + n, static_cast<char*>(chunk));
    done += n;
    if (n < static_cast<size_t>(size)) gzip.BackUp(size - static_cast<int>(n));
  }
  gzip.Close();
  return out;
}

/// The bytes of an IDX file of unsigned bytes with `dims` and `values`.
inline std::string IdxBytes(const std::vector<uint32_t>& dims, const std::string& values) {
  std::string bytes = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (uint32_t dim : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(dim >> shift));
  }
  return bytes + values;
}

/// A raw Datum of C x H x W bytes.
inline Datum RawDatum(int channels, int height, int width, const std::vector<uint8_t>& pixels,
                      int label) {
  Datum datum;
  datum.set_channels(channels);
  datum.set_height(height);
  datum.set_width(width);
  datum.set_data(std::string(pixels.begin(), pixels.end()));
  datum.set_label(label);
  return datum;
}

/// Writes `datums` to a new LMDB at `path`, keyed %08d.
inline void WriteDatumDB(const std::string& path, const std::vector<Datum>& datums) {
  std::shared_ptr<LMDB> db = LMDB::Open(path, DBMode::kNew);
  std::unique_ptr<LMDBTransaction> txn = db->NewTransaction();
  for (size_t i = 0; i < datums.size(); ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "%08zu", i);
    txn->Put(key, datums[i].SerializeAsString());
  }
  txn->Commit();
}

/// `n` 28 x 28 images with label i % 10, drawn as a bright band whose row
/// depends on the label, over noise: a fixed, learnable dataset.
inline void WriteBandsDB(const std::string& path, int n) {
  std::mt19937 engine(7);
  std::vector<Datum> datums;
  for (int i = 0; i < n; ++i) {
    std::vector<uint8_t> pixels(28 * 28);
    for (auto& p : pixels) p = static_cast<uint8_t>(engine() % 96);
    const int label = i % 10;
    for (int x = 0; x < 28; ++x) pixels[(2 + 2 * label) * 28 + x] = 250;
    datums.push_back(RawDatum(1, 28, 28, pixels, label));
  }
  WriteDatumDB(path, datums);
}

/// Small real JPEGs shipped by Debian's opencv-doc package (empty if absent).
inline std::vector<std::string> OpenCvDocJpegs() {
  const std::string dir = "/usr/share/doc/opencv-doc/examples/data/";
  std::vector<std::string> found;
  for (const char* name : {"HappyFish.jpg", "LinuxLogo.jpg", "blox.jpg", "WindowsLogo.jpg",
                           "left01.jpg", "right01.jpg"}) {
    if (std::filesystem::exists(dir + name)) found.push_back(dir + name);
  }
  return found;
}

}  // namespace demi

#endif  // DEMI_TESTS_DATA_TEST_UTIL_HPP_
