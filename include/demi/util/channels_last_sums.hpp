#ifndef DEMI_UTIL_CHANNELS_LAST_SUMS_HPP_
#define DEMI_UTIL_CHANNELS_LAST_SUMS_HPP_

// Per-channel sums over 16-bit tensors stored channels last (NHWC: in
// channel_blocks.hpp, a block of all the channels), in ChannelSumsByRowOf's
// order: an image's terms of a channel added in float, pixel by pixel, then
// the images' sums in double, image by image, so the bits are those of the
// 16-channel blocked layout. There a row of 16 channels is contiguous; here
// a channel's terms lie a pixel apart, so threads take (image, up to
// kLastLanes channels) and read whole cache lines of each pixel, where 16
// channels over every image would read each line once per 16 channels.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "demi/util/threads.hpp"
#include "demi/util/vector_clones.hpp"

namespace demi {

/// The channels of a pixel a thread sums at once: 128 bytes of bfloat16.
constexpr int64_t kLastLanes = 64;

/// sums[j][c], j < K, over outer images of inner pixels of `channels`
/// each: for each pixel, pixel(at, first, n, rows) adds the K terms of
/// channels first .. first + n - 1, whose elements are at .. at + n - 1, into
/// rows[j][0 .. n) (floats: that image's sums so far).
template <int K, typename Pixel>
void ChannelsLastSumsByImage(int64_t outer, int64_t channels, int64_t inner,
                             const std::array<double*, K>& sums, const Pixel& pixel) {
  const int64_t groups = (channels + kLastLanes - 1) / kLastLanes;
  // Each image's sums (outer x K x channels floats), kept between calls: no
  // allocation while a net runs once the largest has been seen.
  thread_local std::vector<float> by_image;
  by_image.resize(outer * K * channels);
  float* const image_sums = by_image.data();
  ParallelForVectorized(outer * groups, GrainFor(K * inner * kLastLanes),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t item = begin; item < end; ++item) {
                            const int64_t o = item / groups, first = item % groups * kLastLanes;
                            const int64_t n = std::min(kLastLanes, channels - first);
                            float* rows[K];
                            for (int j = 0; j < K; ++j) {
                              rows[j] = image_sums + (o * K + j) * channels + first;
                              std::fill_n(rows[j], n, 0.0f);
                            }
                            for (int64_t i = 0; i < inner; ++i)
                              pixel((o * inner + i) * channels + first, first, n, rows);
                          }
                        });
  for (int j = 0; j < K; ++j) {
    double* sum = sums[j];
    std::fill_n(sum, channels, 0.0);
    for (int64_t o = 0; o < outer; ++o) {
      const float* row = image_sums + (o * K + j) * channels;
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) sum[c] += row[c];
    }
  }
}

}  // namespace demi

#endif  // DEMI_UTIL_CHANNELS_LAST_SUMS_HPP_
