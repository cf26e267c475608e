// What every fuzz target shares: quiet logs, bounded memory, and a file
// holding the input for the library paths that read files.
#ifndef DEMI_TESTS_FUZZ_FUZZ_UTIL_HPP_
#define DEMI_TESTS_FUZZ_FUZZ_UTIL_HPP_

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "demi/common.hpp"
#include "demi/util/device.hpp"

namespace demi {
namespace fuzz {

/// The host memory a net or an image may take in a fuzz run: past it the
/// library refuses with an Error, so a huge shape is a clean rejection
/// rather than libFuzzer's out-of-memory report (its limit is 2 GiB of RSS).
constexpr size_t kHostMemoryCap = size_t{256} << 20;

/// Once per process (from LLVMFuzzerInitialize): INFO lines off (they would
/// cost more than the work), the memory cap on, and OpenCV's decoders
/// refusing images over 16 M pixels, so that a tiny header claiming a huge
/// image is a decode error. OpenCV reads that limit from the environment
/// when it is loaded, before any code of ours runs: so the process sets it
/// and starts itself again.
inline void SetUp(char** argv) {
  constexpr const char* kMaxPixels = "OPENCV_IO_MAX_IMAGE_PIXELS";
  if (getenv(kMaxPixels) == nullptr) {
    setenv(kMaxPixels, "16777216", 1);
    execv("/proc/self/exe", argv);
    std::abort();
  }
  FLAGS_minloglevel = 2;
  FLAGS_logtostderr = true;
  SetHostMemoryCap(kHostMemoryCap);
}

/// A file in memory (memfd) whose /proc/self/fd path the library opens like
/// any other; rewritten for each input, never on disk.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("demi_fuzz", 0)) {
    if (fd_ < 0) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  /// Replaces the contents; returns the path to open.
  const std::string& Write(const void* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size)) {
      std::abort();
    }
    return path_;
  }
  const std::string& Write(const std::string& bytes) { return Write(bytes.data(), bytes.size()); }

 private:
  int fd_;
  std::string path_;
};

}  // namespace fuzz
}  // namespace demi

#endif  // DEMI_TESTS_FUZZ_FUZZ_UTIL_HPP_
