#ifndef DEMI_UTIL_CUDA_KERNEL_CUH_
#define DEMI_UTIL_CUDA_KERNEL_CUH_

// For .cu files: the grid-stride loop bounds every kernel uses, in 64-bit
// indices, so tensors past 2^31 elements index correctly, and the
// reductions several layers share.

#include <cstdint>

#include "demi/util/cuda.hpp"

namespace demi {

/// This thread's first element.
__device__ inline int64_t GridStart() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
/// The distance between a thread's elements.
__device__ inline int64_t GridStride() { return static_cast<int64_t>(blockDim.x) * gridDim.x; }

/// The sum of every thread's `value` in a block of kCudaThreads threads, in
/// a fixed tree order (deterministic, unlike atomics); every thread gets it.
/// All threads of the block must call it; `shared` holds kCudaThreads values.
__device__ inline double BlockSum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int half = kCudaThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();  // before `shared` is written again
  return total;
}

/// Queues `kernel` on this thread's stream in `blocks` blocks of kCudaThreads
/// threads and checks the launch, `name` naming the kernel in the message:
/// every launch goes through here.
template <typename... Params, typename... Args>
void Launch(const char* name, unsigned int blocks, void (*kernel)(Params...), Args... args) {
  kernel<<<blocks, kCudaThreads, 0, CudaStream()>>>(args...);
  CheckLaunch(name);
}

/// Blocks for a kernel that gives each of `items` (rows, channels) a block
/// of its own, striding by the grid past the most blocks a launch takes.
inline unsigned int BlockPerItem(int64_t items) {
  return static_cast<unsigned int>(items < 1 ? 1 : (items > 65535 ? 65535 : items));
}

/// The term dy[i] x[i] of a gradient sum, or dy[i] alone where x is null.
struct GradientTerm {
  const float* dy;
  const float* x;
  __device__ double operator()(int64_t i) const {
    return x ? static_cast<double>(dy[i]) * x[i] : static_cast<double>(dy[i]);
  }
};

// kernels

/// out[c] (+)= the sum of term(i) over the elements i = (o * channels + c) *
/// inner + j of channel c of an outer x channels x inner blob: one block per
/// channel, its threads striding over the (o, j) pairs in double, summed in
/// a fixed tree (the same result every run). `accumulate` adds to out (a
/// param gradient) instead of writing it.
template <typename Term>
__global__ void ChannelSumKernel(int64_t outer, int64_t channels, int64_t inner, bool accumulate,
                                 Term term, float* out) {
  __shared__ double shared[kCudaThreads];
  const int64_t per_channel = outer * inner;
  // Thread t sums k = t, t + blockDim.x, ... of the channel's o * inner + j;
  // (o, j) advance by (blockDim.x / inner, blockDim.x % inner) with one carry,
  // sparing a 64-bit division and remainder per element (dozens of
  // instructions each on a GPU), in the same order as dividing k would.
  const int64_t o_step = inner > 0 ? blockDim.x / inner : 0;
  const int64_t j_step = inner > 0 ? blockDim.x % inner : 0;
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    double sum = 0;
    int64_t o = inner > 0 ? threadIdx.x / inner : 0, j = inner > 0 ? threadIdx.x % inner : 0;
    for (int64_t k = threadIdx.x; k < per_channel; k += blockDim.x) {
      sum += term((o * channels + c) * inner + j);
      o += o_step;
      j += j_step;
      if (j >= inner) {
        j -= inner;
        ++o;
      }
    }
    sum = BlockSum(sum, shared);
    if (threadIdx.x == 0) out[c] = static_cast<float>(sum) + (accumulate ? out[c] : 0.0f);
  }
}

// launchers

/// Queues ChannelSumKernel (above) on this thread's stream: the device
/// counterpart of util/channel_blocks.hpp's ChannelSums, on plain layouts.
template <typename Term>
void GpuChannelSums(int64_t outer, int64_t channels, int64_t inner, bool accumulate, Term term,
                    float* out) {
  if (channels == 0) return;
  Launch("ChannelSumKernel", BlockPerItem(channels), ChannelSumKernel<Term>, outer, channels, inner,
         accumulate, term, out);
}

}  // namespace demi

#endif  // DEMI_UTIL_CUDA_KERNEL_CUH_
