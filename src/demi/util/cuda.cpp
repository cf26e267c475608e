#include "demi/util/cuda.hpp"

#ifndef CPU_ONLY

#include <cstdlib>
#include <map>

#include "demi/common.hpp"
#include "demi/util/cuda_scratch.hpp"
#include "demi/util/device.hpp"

namespace demi {

namespace {

/// This thread's stream and cuBLAS handle per device. Thread-local, so each
/// replica thread (one per GPU) has its own and no locking is needed.
struct DeviceHandles {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  void* scratch = nullptr;  ///< CudaScratch's
  size_t scratch_bytes = 0;
  uint64_t scratch_moves = 0;  ///< how often the scratch was allocated anew
};

class ThreadHandles {
 public:
  ~ThreadHandles() {
    // At thread or process exit the driver may be shutting down: ignore errors.
    for (auto& [device, handles] : by_device_) {
      if (cudaSetDevice(device) != cudaSuccess) continue;
      if (handles.cublas) cublasDestroy(handles.cublas);
      if (handles.stream) cudaStreamDestroy(handles.stream);
      if (handles.scratch) cudaFree(handles.scratch);
    }
  }

  DeviceHandles& Current() {
    int device = 0;
    DEMI_CUDA_CHECK(cudaGetDevice(&device));
    DeviceHandles& handles = by_device_[device];
    if (handles.stream == nullptr) {
      DEMI_CUDA_CHECK(cudaStreamCreateWithFlags(&handles.stream, cudaStreamNonBlocking));
    }
    return handles;
  }

  /// Current()'s, with its cuBLAS handle made on first use: threads that
  /// only copy and record events (data prefetch) never make one, whose
  /// destruction at thread exit would wait for the whole device.
  DeviceHandles& CurrentWithCublas() {
    DeviceHandles& handles = Current();
    if (handles.cublas == nullptr) {
      DEMI_CUBLAS_CHECK(cublasCreate(&handles.cublas));
      DEMI_CUBLAS_CHECK(cublasSetStream(handles.cublas, handles.stream));
    }
    return handles;
  }

 private:
  std::map<int, DeviceHandles> by_device_;
};

ThreadHandles& Handles() {
  thread_local ThreadHandles handles;
  return handles;
}

}  // namespace

void CheckLaunch(const char* kernel) {
  const cudaError_t status = cudaPeekAtLastError();
  // The one launch failure a user causes: a build without this GPU's code.
  DEMI_CHECK(status != cudaErrorNoKernelImageForDevice, "launching ", kernel, ": ",
             cudaGetErrorString(status), "; rebuild with CUDA_ARCH (Makefile.config) naming ",
             "this GPU's compute capability, which device_query shows");
  if (status != cudaSuccess) {
    CudaCallFailed(StrCat("launching ", kernel).c_str(), cudaGetErrorString(status));
  }
}

namespace {
thread_local bool thread_capturing = false;
}  // namespace

bool CapturingOnThisThread() { return thread_capturing; }
void SetCapturingOnThisThread(bool capturing) { thread_capturing = capturing; }

void CudaCallFailed(const char* call, const char* message) {
  if (thread_capturing) {
    // Clears the error a capture's refusal leaves behind (it is not sticky).
    static_cast<void>(cudaGetLastError());
    ThrowError(StrCat("inside a CUDA graph capture, ", call, ": ", message));
  }
  LOG(FATAL) << call << ": " << message;
  std::abort();  // LOG(FATAL) does not return; this tells the compiler so
}

cudaStream_t CudaStream() { return Handles().Current().stream; }

cublasHandle_t CublasHandle() { return Handles().CurrentWithCublas().cublas; }

void* CudaScratch(size_t bytes) {
  DeviceHandles& handles = Handles().Current();
  if (bytes > handles.scratch_bytes) {
    // A capture refuses cudaFree and cudaMalloc: refused before the old
    // scratch is freed, the capture's caller runs the layer outside the
    // graphs and the scratch grows there (a later capture then fits).
    if (thread_capturing) {
      ThrowError(StrCat("inside a CUDA graph capture, the CUDA scratch would grow from ",
                        handles.scratch_bytes, " to ", bytes, " bytes"));
    }
    // cudaFree waits for the device, so no queued kernel still reads the old one.
    // DeviceMalloc: counted with the rest of Demitasse's device memory, and out
    // of memory is an error naming the device.
    DeviceFree(handles.scratch);
    handles.scratch = nullptr;
    handles.scratch_bytes = 0;
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    handles.scratch = DeviceMalloc(rounded);
    handles.scratch_bytes = rounded;
    ++handles.scratch_moves;
  }
  return handles.scratch;
}

uint64_t CudaScratchMoves() { return Handles().Current().scratch_moves; }

void SetDevice(int device) { DEMI_CUDA_CHECK(cudaSetDevice(device)); }

void SynchronizeStream() { DEMI_CUDA_CHECK(cudaStreamSynchronize(CudaStream())); }

}  // namespace demi

#endif  // CPU_ONLY
