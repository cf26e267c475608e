#include "demi/util/device.hpp"

#include <malloc.h>
#include <sys/sysinfo.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>

#include "demi/common.hpp"
#include "demi/util/cuda.hpp"

namespace demi {

namespace {

/// HostMalloc's bytes held now (usable sizes, as malloc reports them on free
/// too) and the most it may hold; 0 = no cap.
std::atomic<size_t> host_held{0};
std::atomic<size_t> host_cap{0};

/// The machine's RAM plus swap. No one allocation larger can ever be backed,
/// yet a kernel that overcommits grants it and kills the process when the
/// pages are touched (an H200 host granted 40 TB): refused up front instead.
size_t MachineMemoryBytes() {
  static const size_t bytes = [] {
    struct sysinfo info {};
    if (sysinfo(&info) != 0) return SIZE_MAX;
    return static_cast<size_t>(info.totalram + info.totalswap) * info.mem_unit;
  }();
  return bytes;
}

}  // namespace

void SetHostMemoryCap(size_t bytes) { host_cap = bytes; }

void* HostMalloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  const size_t cap = host_cap.load();
  const size_t held = host_held.load();
  constexpr double kMiB = 1024.0 * 1024.0;
  DEMI_CHECK(cap == 0 || (bytes <= cap && held <= cap - bytes), "cannot allocate ", bytes / kMiB,
             " MiB of host memory: ", held / kMiB, " MiB are held and the cap is ", cap / kMiB,
             " MiB");
  DEMI_CHECK(bytes <= SIZE_MAX - kHostAlignment, "cannot allocate ", bytes,
             " bytes of host memory: the size overflows");
  if (bytes > MachineMemoryBytes()) throw std::bad_alloc();
  size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  void* ptr = std::aligned_alloc(kHostAlignment, rounded);
  if (ptr == nullptr) throw std::bad_alloc();
  host_held += malloc_usable_size(ptr);
  return ptr;
}

void HostFree(void* ptr) {
  if (ptr == nullptr) return;
  host_held -= malloc_usable_size(ptr);
  std::free(ptr);
}

namespace {

std::atomic<int64_t> device_current{0};
std::atomic<int64_t> device_peak{0};
std::atomic<int64_t> device_allocations{0};

}  // namespace

DeviceMemoryCounters GetDeviceMemoryCounters() {
  return {device_current.load(), device_peak.load(), device_allocations.load()};
}

#ifdef CPU_ONLY

namespace {
[[noreturn]] void NoCuda() {
  ThrowError(
      "this build of Demitasse has no CUDA support (CPU_ONLY); "
      "rebuild with USE_CUDA := 1 in Makefile.config to use a GPU");
}
}  // namespace

void* PinnedHostMalloc(size_t bytes) { return HostMalloc(bytes); }
void PinnedHostFree(void* ptr) { HostFree(ptr); }
void* DeviceMalloc(size_t) { NoCuda(); }
void DeviceFree(void* ptr) { CHECK(ptr == nullptr) << "device pointer in a CPU_ONLY build"; }
void CopyHostToDevice(void*, const void*, size_t) { NoCuda(); }
void CopyDeviceToHost(void*, const void*, size_t) { NoCuda(); }
void DeviceMemset(void*, int, size_t) { NoCuda(); }
int DeviceCount() { return 0; }
void SetCurrentDevice(int) { NoCuda(); }
void SynchronizeDevice() {}
DeviceInfo GetDeviceInfo(int) { NoCuda(); }

#else

namespace {

/// DeviceMalloc's sizes, for the counters on free.
std::mutex sizes_mutex;
std::unordered_map<void*, size_t>& AllocationSizes() {
  static auto* sizes = new std::unordered_map<void*, size_t>();
  return *sizes;
}

void CountAllocation(void* ptr, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(sizes_mutex);
    AllocationSizes()[ptr] = bytes;
  }
  const int64_t now = device_current += static_cast<int64_t>(bytes);
  ++device_allocations;
  int64_t peak = device_peak.load();
  while (now > peak && !device_peak.compare_exchange_weak(peak, now)) {
  }
}

void CountFree(void* ptr) {
  std::lock_guard<std::mutex> lock(sizes_mutex);
  auto it = AllocationSizes().find(ptr);
  if (it == AllocationSizes().end()) return;
  device_current -= static_cast<int64_t>(it->second);
  AllocationSizes().erase(it);
}

/// Pinned buffers come from cudaMallocHost only when a device exists; the
/// set remembers which, so that each is freed by its own allocator.
std::mutex pinned_mutex;
std::unordered_map<void*, bool>& PinnedKinds() {
  static auto* kinds = new std::unordered_map<void*, bool>();
  return *kinds;
}

/// Whether this thread chose a device (SetCurrentDevice): only then does it
/// pin, so CPU work on a machine with GPUs makes no CUDA context, and a
/// prefetch thread pins for its own GPU rather than GPU 0.
thread_local bool thread_chose_device = false;
}  // namespace

void* PinnedHostMalloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  const bool pinned = thread_chose_device && cudaMallocHost(&ptr, bytes) == cudaSuccess;
  if (!pinned) {
    cudaGetLastError();
    ptr = HostMalloc(bytes);
  }
  std::lock_guard<std::mutex> lock(pinned_mutex);
  PinnedKinds()[ptr] = pinned;
  return ptr;
}

void PinnedHostFree(void* ptr) {
  if (ptr == nullptr) return;
  bool pinned = false;
  {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    auto it = PinnedKinds().find(ptr);
    CHECK(it != PinnedKinds().end()) << "PinnedHostFree of a pointer it did not allocate";
    pinned = it->second;
    PinnedKinds().erase(it);
  }
  if (pinned) {
    DEMI_CUDA_CHECK(cudaFreeHost(ptr));
  } else {
    HostFree(ptr);
  }
}

void* DeviceMalloc(size_t bytes) {
  void* ptr = nullptr;
  if (bytes == 0) return ptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status != cudaSuccess) {
    cudaGetLastError();
    int device = -1;
    cudaGetDevice(&device);
    size_t free_bytes = 0, total_bytes = 0;
    // A capture refuses cudaMalloc, and may refuse cudaMemGetInfo too.
    if (CapturingOnThisThread()) {
      ThrowError(StrCat("inside a CUDA graph capture, cannot allocate ", bytes, " bytes on GPU ",
                        device, ": ", cudaGetErrorString(status)));
    }
    cudaMemGetInfo(&free_bytes, &total_bytes);
    ThrowError(StrCat("cannot allocate ", bytes, " bytes on GPU ", device, " (", free_bytes >> 20,
                      " MiB free of ", total_bytes >> 20, " MiB): ", cudaGetErrorString(status),
                      "; try a smaller batch, or build/tools/memory --fit to find one"));
  }
  CountAllocation(ptr, bytes);
  return ptr;
}

void DeviceFree(void* ptr) {
  if (ptr == nullptr) return;
  // A capture refuses cudaFree: refused before the count forgets the memory.
  if (CapturingOnThisThread()) {
    ThrowError("inside a CUDA graph capture, cudaFree of device memory is refused");
  }
  CountFree(ptr);
  DEMI_CUDA_CHECK(cudaFree(ptr));
}

void CopyHostToDevice(void* dst, const void* src, size_t bytes) {
  DEMI_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, CudaStream()));
}

void CopyDeviceToHost(void* dst, const void* src, size_t bytes) {
  DEMI_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, CudaStream()));
  SynchronizeStream();
}

void DeviceMemset(void* ptr, int value, size_t bytes) {
  DEMI_CUDA_CHECK(cudaMemsetAsync(ptr, value, bytes, CudaStream()));
}

int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

void SetCurrentDevice(int id) {
  SetDevice(id);
  thread_chose_device = true;
}

void SynchronizeDevice() { SynchronizeStream(); }

DeviceInfo GetDeviceInfo(int id) {
  const int count = DeviceCount();
  DEMI_CHECK(id >= 0 && id < count, "GPU ", id, " does not exist (", count, " device(s) present)");
  cudaDeviceProp prop{};
  DEMI_CUDA_CHECK(cudaGetDeviceProperties(&prop, id));
  DeviceInfo info;
  info.name = prop.name;
  info.total_bytes = prop.totalGlobalMem;
  info.major = prop.major;
  info.minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  int previous = 0;
  DEMI_CUDA_CHECK(cudaGetDevice(&previous));
  DEMI_CUDA_CHECK(cudaSetDevice(id));
  DEMI_CUDA_CHECK(cudaMemGetInfo(&info.free_bytes, &info.total_bytes));
  DEMI_CUDA_CHECK(cudaSetDevice(previous));
  return info;
}

#endif

}  // namespace demi
