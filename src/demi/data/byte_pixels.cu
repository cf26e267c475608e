// NormalizeBytes on the device (byte_pixels.hpp): the Data layer's batches
// arrive as bytes and leave as the floats the net reads.
#include "demi/data/byte_pixels.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/fast_divider.hpp"

namespace demi {

namespace {

__global__ void NormalizeBytesKernel(int64_t n, ChannelOf channel_of, const float* mean,
                                     float scale, const uint8_t* in, float* out) {
  // __fsub_rn and __fmul_rn: never contracted into one fused rounding, as
  // the host's two are not.
  ElementwiseInto(n, out, [=](int64_t i) {
    return __fmul_rn(__fsub_rn(static_cast<float>(in[i]), mean[channel_of(i)]), scale);
  });
}

}  // namespace

void NormalizeBytesGpu(const float* mean, float scale, int64_t examples, int64_t channels,
                       int64_t spatial, const uint8_t* in, float* out) {
  const int64_t n = examples * channels * spatial;
  if (n == 0) return;
  Launch("NormalizeBytesKernel", ElementwiseBlocks(n), NormalizeBytesKernel, n,
         ChannelOf(spatial, channels), mean, scale, in, out);
}

}  // namespace demi
