#include "demi/util/device.hpp"

#include <cstdlib>
#include <new>

#include "demi/common.hpp"

#ifndef CPU_ONLY
#include <cuda_runtime.h>
#define DEMI_CUDA_CHECK(call)                                                     \
  do {                                                                            \
    cudaError_t status = (call);                                                  \
    CHECK_EQ(status, cudaSuccess) << #call << ": " << cudaGetErrorString(status); \
  } while (0)
#endif

namespace demi {

void* HostMalloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  void* ptr = std::aligned_alloc(kHostAlignment, rounded);
  if (ptr == nullptr) throw std::bad_alloc();
  return ptr;
}

void HostFree(void* ptr) { std::free(ptr); }

#ifdef CPU_ONLY

namespace {
[[noreturn]] void NoCuda() {
  ThrowError(
      "this build of Demitasse has no CUDA support (CPU_ONLY); "
      "rebuild with USE_CUDA := 1 in Makefile.config to use a GPU");
}
}  // namespace

void* DeviceMalloc(size_t) { NoCuda(); }
void DeviceFree(void* ptr) { CHECK(ptr == nullptr) << "device pointer in a CPU_ONLY build"; }
void CopyHostToDevice(void*, const void*, size_t) { NoCuda(); }
void CopyDeviceToHost(void*, const void*, size_t) { NoCuda(); }
void DeviceMemset(void*, int, size_t) { NoCuda(); }
int DeviceCount() { return 0; }

#else

void* DeviceMalloc(size_t bytes) {
  void* ptr = nullptr;
  if (bytes > 0) DEMI_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  return ptr;
}
void DeviceFree(void* ptr) {
  if (ptr != nullptr) DEMI_CUDA_CHECK(cudaFree(ptr));
}
void CopyHostToDevice(void* dst, const void* src, size_t bytes) {
  DEMI_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}
void CopyDeviceToHost(void* dst, const void* src, size_t bytes) {
  DEMI_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}
void DeviceMemset(void* ptr, int value, size_t bytes) {
  DEMI_CUDA_CHECK(cudaMemset(ptr, value, bytes));
}
int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

#endif

}  // namespace demi
