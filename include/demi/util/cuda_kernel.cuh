#ifndef DEMI_UTIL_CUDA_KERNEL_CUH_
#define DEMI_UTIL_CUDA_KERNEL_CUH_

// For .cu files: the grid-stride loop bounds every kernel uses, in 64-bit
// indices, so tensors past 2^31 elements index correctly, and the
// reductions several layers share.

#include <cstdint>

#include "demi/util/cuda.hpp"
#include "demi/util/cuda_scratch.hpp"
#include "demi/util/fast_divider.hpp"

namespace demi {

/// This thread's first element.
__device__ inline int64_t GridStart() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
/// The distance between a thread's elements.
__device__ inline int64_t GridStride() { return static_cast<int64_t>(blockDim.x) * gridDim.x; }

/// The elements per thread and round of ElementwiseLoop.
constexpr int kElementsInFlight = 4;

/// Blocks for ElementwiseLoop over `n` elements: a thread per four.
inline unsigned int ElementwiseBlocks(int64_t n) {
  return CudaBlocks((n + kElementsInFlight - 1) / kElementsInFlight);
}

/// Grid-strides over [0, n), value(i) for four elements (i, i + stride, ...)
/// before store(i, value) of any of them. An elementwise kernel is bound by
/// the loads in flight, and one per thread reaches about half of an H100's
/// bandwidth; four overlap. In place is fine: a thread reads its elements
/// before it writes them. Launch with ElementwiseBlocks(n).
template <typename Value, typename Store>
__device__ inline void ElementwiseLoop(int64_t n, Value value, Store store) {
  const int64_t stride = GridStride();
  int64_t i = GridStart();
  for (; i + 3 * stride < n; i += 4 * stride) {
    const auto v0 = value(i), v1 = value(i + stride), v2 = value(i + 2 * stride),
               v3 = value(i + 3 * stride);
    store(i, v0);
    store(i + stride, v1);
    store(i + 2 * stride, v2);
    store(i + 3 * stride, v3);
  }
  for (; i < n; i += stride) store(i, value(i));
}

/// ElementwiseLoop writing y[i] = value(i).
template <typename Value>
__device__ inline void ElementwiseInto(int64_t n, float* y, Value value) {
  ElementwiseLoop(n, value, [y](int64_t i, float v) { y[i] = v; });
}

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

/// Two sums taken in one pass over the data (BatchNorm's backward needs the
/// sums of dy and of dy y).
struct DoublePair {
  double a = 0, b = 0;
  __device__ DoublePair& operator+=(const DoublePair& other) {
    a += other.a;
    b += other.b;
    return *this;
  }
};

__device__ inline DoublePair BlockSum(DoublePair value, double* shared) {
  return {BlockSum(value.a, shared), BlockSum(value.b, shared)};
}

/// How GpuChannelReduce cuts each channel's outer x inner elements among blocks:
/// `splits` runs of `run` consecutive elements (k = o * inner + j), so that
/// even a net's 64-channel layers fill a GPU. It depends on the shape alone,
/// so every device and run sums in the same order.
struct ChannelSplit {
  int64_t splits = 1, run = 0;
};

/// A cut of `length` positions into `splits` runs for `units` x splits
/// blocks: about 2048 blocks in all (a dozen per multiprocessor on the
/// largest GPUs), none with fewer than 8192 elements (`width` per position).
inline ChannelSplit SplitRuns(int64_t length, int64_t units, int64_t width) {
  const int64_t wanted = (2048 + units - 1) / units;
  const int64_t most = length * width / 8192;
  ChannelSplit split;
  split.splits = wanted < most ? wanted : (most > 1 ? most : 1);
  split.run = (length + split.splits - 1) / split.splits;
  return split;
}

inline ChannelSplit SplitChannels(int64_t outer, int64_t channels, int64_t inner) {
  return SplitRuns(outer * inner, channels, 1);
}

// kernels

/// Block (c, s) of GpuChannelReduce: the sum of term(i) over run s of channel c's
/// elements i = (o * channels + c) * inner + j, into partial[c * splits + s].
/// Each thread strides over the run with (o, j) advanced by one carry, not a
/// 64-bit division per element, four elements loaded before they are added
/// (in order) so that loads overlap; the block adds its threads in a fixed
/// tree.
template <typename Term, typename Sum>
__global__ void ChannelPartialSumKernel(int64_t outer, int64_t channels, int64_t inner,
                                        ChannelSplit split, Term term, Sum* partial) {
  __shared__ double shared[kCudaThreads];
  const int64_t per_channel = outer * inner;
  const int64_t o_step = blockDim.x / inner, j_step = blockDim.x % inner;
  for (int64_t b = blockIdx.x; b < channels * split.splits; b += gridDim.x) {
    const int64_t c = b / split.splits;
    const int64_t begin = b % split.splits * split.run;
    const int64_t end = begin + split.run < per_channel ? begin + split.run : per_channel;
    int64_t k = begin + threadIdx.x;
    int64_t o = k / inner, j = k % inner;
    auto next = [&] {
      const int64_t i = (o * channels + c) * inner + j;
      o += o_step;
      j += j_step;
      if (j >= inner) {
        j -= inner;
        ++o;
      }
      return i;
    };
    Sum sum{};
    const int64_t stride = blockDim.x;
    for (; k + 3 * stride < end; k += 4 * stride) {
      const int64_t i0 = next(), i1 = next(), i2 = next(), i3 = next();
      const Sum t0 = term(i0), t1 = term(i1), t2 = term(i2), t3 = term(i3);
      sum += t0;
      sum += t1;
      sum += t2;
      sum += t3;
    }
    for (; k < end; k += stride) sum += term(next());
    sum = BlockSum(sum, shared);
    if (threadIdx.x == 0) partial[b] = sum;
  }
}

/// The lanes of ChannelsLastPartialSumKernel: the channels one block takes.
constexpr int kChannelTile = 32;

/// GpuChannelReduce's cut of a channels-last tensor (inner 1: element
/// o * channels + c): runs of rows o, each taken by one block per tile of
/// kChannelTile channels.
inline ChannelSplit SplitRows(int64_t rows, int64_t channels) {
  const int64_t tiles = (channels + kChannelTile - 1) / kChannelTile;
  return SplitRuns(rows, tiles, channels < kChannelTile ? channels : kChannelTile);
}

/// Block (t, s) of GpuChannelReduce on a channels-last tensor: for each
/// channel c of tile t, the sum of term(o * channels + c) over run s of the
/// rows o, into partial[c * splits + s]. A warp reads kChannelTile adjacent
/// channels of a row (coalesced, where ChannelPartialSumKernel would stride
/// by the channels); the block's row groups are added in a fixed order.
template <typename Term, typename Sum>
__global__ void ChannelsLastPartialSumKernel(int64_t rows, int64_t channels, ChannelSplit split,
                                             Term term, Sum* partial) {
  constexpr int kRowGroups = kCudaThreads / kChannelTile;
  __shared__ double shared[kCudaThreads * sizeof(Sum) / sizeof(double)];
  Sum* sums = reinterpret_cast<Sum*>(shared);
  const int lane = threadIdx.x % kChannelTile, group = threadIdx.x / kChannelTile;
  const int64_t tiles = (channels + kChannelTile - 1) / kChannelTile;
  for (int64_t b = blockIdx.x; b < tiles * split.splits; b += gridDim.x) {
    const int64_t c = b / split.splits * kChannelTile + lane;
    const int64_t s = b % split.splits;
    const int64_t begin = s * split.run;
    const int64_t end = begin + split.run < rows ? begin + split.run : rows;
    Sum sum{};
    if (c < channels) {
      for (int64_t o = begin + group; o < end; o += kRowGroups) sum += term(o * channels + c);
    }
    sums[threadIdx.x] = sum;
    __syncthreads();
    if (group == 0 && c < channels) {
      Sum total{};
      for (int g = 0; g < kRowGroups; ++g) total += sums[g * kChannelTile + lane];
      partial[c * split.splits + s] = total;
    }
    __syncthreads();  // before `sums` is written again
  }
}

/// One thread per channel: totals[c] = the sum of channel c's partials in
/// order, then finish(c, totals[c]).
template <typename Sum, typename Finish>
__global__ void ChannelTotalKernel(int64_t channels, int64_t splits, const Sum* partial,
                                   Sum* totals, Finish finish) {
  for (int64_t c = GridStart(); c < channels; c += GridStride()) {
    Sum total{};
    for (int64_t s = 0; s < splits; ++s) total += partial[c * splits + s];
    totals[c] = total;
    finish(c, total);
  }
}

/// out[c] = total, or out[c] += total where `accumulate` (a param gradient).
struct StoreChannelSum {
  float* out;
  bool accumulate;
  __device__ void operator()(int64_t c, double total) const {
    out[c] = static_cast<float>(total) + (accumulate ? out[c] : 0.0f);
  }
};

/// For a caller that reads the totals array itself.
struct KeepChannelTotals {
  template <typename Sum>
  __device__ void operator()(int64_t, const Sum&) const {}
};

// launchers

/// Queues the sum of term(i) over each channel c of an outer x channels x
/// inner blob: partial sums in double over runs of the channel
/// (ChannelPartialSumKernel), then their totals in a fixed order, so the
/// result is the same every run; each total goes to finish(c, total) on the
/// device. `Sum` is double or DoublePair. Returns the totals, one per channel,
/// in this thread's CudaScratch (read them before the next user of it). The
/// device counterpart of util/channel_blocks.hpp's ChannelSums, on Caffe's
/// layout and channels last (ChannelAxis: inner 1).
template <typename Sum, typename Term, typename Finish = KeepChannelTotals>
const Sum* GpuChannelReduce(int64_t outer, int64_t channels, int64_t inner, Term term,
                            Finish finish = Finish{}) {
  if (channels == 0) return nullptr;
  // Channels last (inner 1) is read along the channels.
  const bool last = inner == 1 && channels > 1;
  const ChannelSplit split =
      last ? SplitRows(outer, channels) : SplitChannels(outer, channels, inner);
  const int64_t blocks = channels * split.splits;
  auto* partial = static_cast<Sum*>(CudaScratch((blocks + channels) * sizeof(Sum)));
  Sum* totals = partial + blocks;
  if (outer * inner > 0 && last) {
    const int64_t tiles = (channels + kChannelTile - 1) / kChannelTile;
    Launch("ChannelsLastPartialSumKernel", BlockPerItem(tiles * split.splits),
           ChannelsLastPartialSumKernel<Term, Sum>, outer, channels, split, term, partial);
  } else if (outer * inner > 0) {
    Launch("ChannelPartialSumKernel", BlockPerItem(blocks), ChannelPartialSumKernel<Term, Sum>,
           outer, channels, inner, split, term, partial);
  } else {
    DEMI_CUDA_CHECK(cudaMemsetAsync(partial, 0, blocks * sizeof(Sum), CudaStream()));
  }
  Launch("ChannelTotalKernel", CudaBlocks(channels), ChannelTotalKernel<Sum, Finish>, channels,
         split.splits, partial, totals, finish);
  return totals;
}

/// out[c] (+)= the sum of term(i) over channel c (GpuChannelReduce).
/// `accumulate` adds to out (a param gradient) instead of writing it.
template <typename Term>
void GpuChannelSums(int64_t outer, int64_t channels, int64_t inner, bool accumulate, Term term,
                    float* out) {
  GpuChannelReduce<double>(outer, channels, inner, term, StoreChannelSum{out, accumulate});
}

}  // namespace demi

#endif  // DEMI_UTIL_CUDA_KERNEL_CUH_
