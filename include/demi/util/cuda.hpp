#ifndef DEMI_UTIL_CUDA_HPP_
#define DEMI_UTIL_CUDA_HPP_

// The CUDA runtime as the rest of Demitasse sees it: checked calls, and one
// stream and cuBLAS handle per device and host thread. CUDA builds only.
#ifndef CPU_ONLY

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <glog/logging.h>

#include <cstdint>

/// Aborts with the call and CUDA's message: a failed CUDA call is a bug or a
/// broken device, not bad user input (CudaCallFailed: except in a capture).
#define DEMI_CUDA_CHECK(call)                                     \
  do {                                                            \
    const cudaError_t status_ = (call);                           \
    if (status_ != cudaSuccess) {                                 \
      ::demi::CudaCallFailed(#call, cudaGetErrorString(status_)); \
    }                                                             \
  } while (0)

#define DEMI_CUBLAS_CHECK(call)                                      \
  do {                                                               \
    const cublasStatus_t status_ = (call);                           \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                          \
      ::demi::CudaCallFailed(#call, cublasGetStatusString(status_)); \
    }                                                                \
  } while (0)

namespace demi {

/// Threads per block of every elementwise kernel.
constexpr int kCudaThreads = 256;

/// Blocks for `n` elements; kernels loop with a grid stride, so the grid is
/// capped rather than grown without bound.
inline unsigned int CudaBlocks(int64_t n) {
  const int64_t blocks = (n + kCudaThreads - 1) / kCudaThreads;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

/// What a DEMI_*_CHECK does with a failed call: aborts with the call and the
/// library's message, except while this thread captures a CUDA graph
/// (CudaGraph; CapturingOnThisThread): then it throws an Error, so that the
/// capture can leave out the layer that made a call no graph can hold (a
/// copy to the host, a synchronization) and run it outside.
[[noreturn]] void CudaCallFailed(const char* call, const char* message);
/// Whether this thread is capturing its stream into a CUDA graph.
bool CapturingOnThisThread();
void SetCapturingOnThisThread(bool capturing);

/// Checks the last kernel launch (bad configuration, no kernel image for this
/// device); `kernel` names it in the message.
void CheckLaunch(const char* kernel);

/// The stream every kernel, copy and cuBLAS call of this host thread uses on
/// the current device (created on first use, never the legacy default
/// stream, so that replicas on different devices never serialize).
cudaStream_t CudaStream();
/// This thread's cuBLAS handle on the current device, bound to CudaStream().
cublasHandle_t CublasHandle();
/// Makes `device` current for this thread.
void SetDevice(int device);
/// Waits for everything queued on CudaStream().
void SynchronizeStream();

}  // namespace demi

#endif  // CPU_ONLY
#endif  // DEMI_UTIL_CUDA_HPP_
