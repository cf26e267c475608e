#ifndef DEMI_LAYERS_CHANNELS_LAST_LRN_HPP_
#define DEMI_LAYERS_CHANNELS_LAST_LRN_HPP_

// LRN across channels between channels-last (NHWC) blobs on the CPU, where
// oneDNN 2.6 runs it only in FLOAT in its channel blocks: a 16-bit
// channels-last blob took a reorder in and out of each pass, and backward a
// recomputed forward (GoogLeNet in bfloat16: 15 % of its step). Here a
// pixel's channels are contiguous: each window is a run of them.
#include <cstdint>

#include "demi/blob.hpp"

namespace demi {

/// The most channels a pixel may have here (its runs stay on the stack),
/// and the widest window.
constexpr int64_t kMaxLrnChannels = 1024;
constexpr int64_t kMaxLrnSize = 33;

/// Caffe's LRN across channels over `pixels` pixels of `channels` channels:
/// scale_c = k + alpha / size * sum of x_j^2 over the `size` channels
/// centred on c (zeros past the ends), y_c = x_c scale_c^-beta; beta 0.75
/// only (AlexNet's, CaffeNet's and GoogLeNet's), taken as r sqrt(r) with
/// r = 1 / sqrt(scale).
struct LrnGeometry {
  int64_t pixels, channels, size;
  float alpha, k;
};

/// beta, the only one these kernels take.
constexpr float kLrnBeta = 0.75f;

/// y from x, both stored as `stored`. Threads take pixels.
void ChannelsLastLrnForward(const LrnGeometry& g, Type stored, const void* x, void* y);

/// dx = dy scale^-beta - 2 beta alpha / size * x * (the window sums of
/// dy y / scale), the scales and y recomputed from x. Threads take pixels.
void ChannelsLastLrnBackward(const LrnGeometry& g, Type stored, const void* x, const void* dy,
                             void* dx);

}  // namespace demi

#endif  // DEMI_LAYERS_CHANNELS_LAST_LRN_HPP_
