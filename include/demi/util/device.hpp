#ifndef DEMI_UTIL_DEVICE_HPP_
#define DEMI_UTIL_DEVICE_HPP_

#include <cstddef>
#include <cstdint>
#include <string>

namespace demi {

/// Host allocations are aligned for SIMD and cache lines.
constexpr size_t kHostAlignment = 64;

void* HostMalloc(size_t bytes);
void HostFree(void* ptr);
/// Caps the host memory HostMalloc holds at once (0, the default: no cap);
/// a request past it throws Error with the figures instead of allocating.
/// The fuzz targets set it, so that a net too big to build is rejected
/// cleanly rather than reported as out of memory.
void SetHostMemoryCap(size_t bytes);

/// Page-locked host memory (data-layer prefetch buffers), so copies to the
/// device run asynchronously at full speed, when the calling thread has made
/// a device current (SetCurrentDevice); plain HostMalloc otherwise.
void* PinnedHostMalloc(size_t bytes);
void PinnedHostFree(void* ptr);

/// A std::vector allocator of PinnedHostMalloc memory.
template <typename T>
struct PinnedAllocator {
  using value_type = T;
  PinnedAllocator() = default;
  template <typename U>
  explicit PinnedAllocator(const PinnedAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(PinnedHostMalloc(n * sizeof(T))); }
  void deallocate(T* ptr, size_t) { PinnedHostFree(ptr); }
  template <typename U>
  bool operator==(const PinnedAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const PinnedAllocator<U>&) const {
    return false;
  }
};

/// Device allocation and copies, on the current device and this thread's
/// stream (util/cuda.hpp). On a CPU_ONLY build these fail with a clear
/// message: nothing in a CPU build reaches them unless a user asks for a GPU.
void* DeviceMalloc(size_t bytes);
void DeviceFree(void* ptr);
/// Host to device: queued on the stream (later kernels on it see the bytes).
void CopyHostToDevice(void* dst, const void* src, size_t bytes);
/// Device to host: returns once the bytes are on the host.
void CopyDeviceToHost(void* dst, const void* src, size_t bytes);
void DeviceMemset(void* ptr, int value, size_t bytes);

/// Number of CUDA devices present (0 on CPU_ONLY builds or without a GPU).
int DeviceCount();
/// Makes GPU `id` current for the calling thread (an Error on CPU_ONLY builds).
void SetCurrentDevice(int id);
/// Waits for this thread's stream on the current device (no-op on CPU_ONLY).
void SynchronizeDevice();

struct DeviceInfo {
  std::string name;
  size_t total_bytes = 0;
  size_t free_bytes = 0;  ///< cudaMemGetInfo at the time of the call
  int major = 0;          ///< compute capability
  int minor = 0;
  int multiprocessors = 0;
};
/// Facts of device `id` (an Error if it does not exist).
DeviceInfo GetDeviceInfo(int id);

/// Bytes DeviceMalloc holds now and at most so far, over all devices.
struct DeviceMemoryCounters {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocations = 0;
};
DeviceMemoryCounters GetDeviceMemoryCounters();

}  // namespace demi

#endif  // DEMI_UTIL_DEVICE_HPP_
