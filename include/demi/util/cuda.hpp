#ifndef DEMI_UTIL_CUDA_HPP_
#define DEMI_UTIL_CUDA_HPP_

// The CUDA runtime as the rest of Demitasse sees it: checked calls, and one
// stream and cuBLAS handle per device and host thread. CUDA builds only.
#ifndef CPU_ONLY

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <glog/logging.h>

#include <cstdint>

/// Checks a CUDA-library call that returns a status: one that is not
/// `success` aborts with the call and the library's message (`message_of`
/// the status), a bug or a broken device, not bad user input; while this
/// thread captures a CUDA graph it throws instead (CudaCallFailed).
#define DEMI_GPU_CALL_CHECK(call, success, message_of)    \
  do {                                                    \
    const auto status_ = (call);                          \
    if (status_ != (success)) {                           \
      ::demi::CudaCallFailed(#call, message_of(status_)); \
    }                                                     \
  } while (0)

#define DEMI_CUDA_CHECK(call) DEMI_GPU_CALL_CHECK(call, cudaSuccess, cudaGetErrorString)
#define DEMI_CUBLAS_CHECK(call) \
  DEMI_GPU_CALL_CHECK(call, CUBLAS_STATUS_SUCCESS, cublasGetStatusString)

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
