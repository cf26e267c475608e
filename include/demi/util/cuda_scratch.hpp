#ifndef DEMI_UTIL_CUDA_SCRATCH_HPP_
#define DEMI_UTIL_CUDA_SCRATCH_HPP_

// A few kilobytes of device memory between two kernels of one call (a
// reduction's partial sums). CUDA builds only.
#ifndef CPU_ONLY

#include <cstddef>
#include <cstdint>

namespace demi {

/// This host thread's scratch on the current device, at least `bytes` long:
/// grown (never shrunk) on demand, kept until the thread ends. Work queued on
/// this thread's stream (CudaStream()) may use it until the next call: the
/// stream orders each user after the last, and growing waits for the device
/// (cudaFree). Not for buffers that scale with a net's tensors: those are the
/// planner's.
void* CudaScratch(size_t bytes);
/// How often this thread's scratch on the current device was allocated anew:
/// a CUDA graph that captured its address is stale once this changed.
uint64_t CudaScratchMoves();

}  // namespace demi

#endif  // CPU_ONLY
#endif  // DEMI_UTIL_CUDA_SCRATCH_HPP_
