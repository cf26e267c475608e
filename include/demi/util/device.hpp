#ifndef DEMI_UTIL_DEVICE_HPP_
#define DEMI_UTIL_DEVICE_HPP_

#include <cstddef>

namespace demi {

/// Host allocations are aligned for SIMD and cache lines.
constexpr size_t kHostAlignment = 64;

void* HostMalloc(size_t bytes);
void HostFree(void* ptr);

/// Device allocation and copies. On a CPU_ONLY build these fail with a clear
/// message: nothing in a CPU build reaches them unless a user asks for a GPU.
void* DeviceMalloc(size_t bytes);
void DeviceFree(void* ptr);
void CopyHostToDevice(void* dst, const void* src, size_t bytes);
void CopyDeviceToHost(void* dst, const void* src, size_t bytes);
void DeviceMemset(void* ptr, int value, size_t bytes);

/// Number of CUDA devices present (0 on CPU_ONLY builds or without a GPU).
int DeviceCount();

}  // namespace demi

#endif  // DEMI_UTIL_DEVICE_HPP_
