#ifndef DEMI_LAYERS_CHANNELS_LAST_MAX_POOL_HPP_
#define DEMI_LAYERS_CHANNELS_LAST_MAX_POOL_HPP_

// Max pooling between channels-last (NHWC) blobs on the CPU, where oneDNN
// 2.6's pooling took about 2.8 ns an output in every layout and type
// (GoogLeNet in bfloat16: 24 % of its step). Here each window's channels
// are contiguous, so a pixel's comparisons run across channels in vectors.
#include <cstdint>

#include "demi/blob.hpp"

namespace demi {

/// The most elements a window may have: its winner's index is a byte.
constexpr int64_t kMaxPoolWindowElements = 256;

/// Caffe's max pooling of `num` images of channels x height x width into
/// pooled_h x pooled_w: the window of output (oh, ow) starts at row
/// oh stride_h - pad_h and column ow stride_w - pad_w, spans the kernel, and
/// is clipped to the image; every window must hold a pixel of it.
struct MaxPoolGeometry {
  int64_t num, channels, height, width, pooled_h, pooled_w;
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;

  int64_t window_elements() const { return kernel_h * kernel_w; }
};

/// y = each window's largest x, channel by channel, and `window` (a byte
/// an output) = where in its kernel_h x kernel_w window the winner lies:
/// the first of equal maxima in row-major order, as Caffe's engine picks.
/// x and y stored as `stored` (FLOAT, BFLOAT16 or FLOAT16). Threads take
/// output rows.
void ChannelsLastMaxPoolForward(const MaxPoolGeometry& g, Type stored, const void* x, void* y,
                                uint8_t* window);

/// dx = the sum of the dy routed to each input by `window`, added in
/// Caffe's order (outputs in raster order, in FLOAT) and rounded once; every
/// element of dx is written. Threads take input rows.
void ChannelsLastMaxPoolBackward(const MaxPoolGeometry& g, Type stored, const void* dy,
                                 const uint8_t* window, void* dx);

}  // namespace demi

#endif  // DEMI_LAYERS_CHANNELS_LAST_MAX_POOL_HPP_
