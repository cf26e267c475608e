#include "demi/layers/channels_last_max_pool.hpp"

#include <algorithm>

#include "demi/util/rounded_chunks.hpp"
#include "demi/util/vector_clones.hpp"

namespace demi {

namespace {

/// Channels a pass takes at once: its running maxima or sums stay in
/// registers or L1.
constexpr int64_t kChannelChunk = 64;

/// A window along one axis: it starts at `start` (maybe in the padding) and
/// covers the image's [lo, hi).
struct WindowSpan {
  int64_t start, lo, hi;
};

WindowSpan SpanOf(int64_t out, int64_t kernel, int64_t stride, int64_t pad, int64_t size) {
  const int64_t start = out * stride - pad;
  return {start, std::max<int64_t>(start, 0), std::min(start + kernel, size)};
}

/// The outputs [lo, hi) along one axis whose windows cover input `in`: those
/// with out stride - pad <= in < out stride - pad + kernel.
struct OutputRange {
  int64_t lo, hi;
};

OutputRange CoveringOutputs(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                            int64_t pooled) {
  const int64_t before = in + pad - kernel;  // out stride must exceed it
  const int64_t lo = before < 0 ? 0 : before / stride + 1;
  return {lo, std::min(pooled, (in + pad) / stride + 1)};
}

template <typename T>
void MaxPoolForward(const MaxPoolGeometry& g, const T* x, T* y, uint8_t* window) {
  const int64_t grain = GrainFor(g.pooled_w * g.channels * g.window_elements());
  ParallelForVectorized(g.num * g.pooled_h, grain, [=](int64_t begin, int64_t end) {
    const int64_t channels = g.channels, width = g.width, kernel_w = g.kernel_w;
    float best[kChannelChunk];
    int32_t winner[kChannelChunk];
    for (int64_t row = begin; row < end; ++row) {  // row: (image, oh)
      const WindowSpan h = SpanOf(row % g.pooled_h, g.kernel_h, g.stride_h, g.pad_h, g.height);
      const T* image = x + row / g.pooled_h * g.height * width * channels;
      for (int64_t ow = 0; ow < g.pooled_w; ++ow) {
        const WindowSpan w = SpanOf(ow, kernel_w, g.stride_w, g.pad_w, width);
        const int64_t out = (row * g.pooled_w + ow) * channels;
        for (int64_t c = 0; c < channels; c += kChannelChunk) {
          const int64_t n = std::min(kChannelChunk, channels - c);
          // The window's first pixel, then the others in row-major order: a
          // later one wins only if larger (the first of equal maxima stays,
          // as in Caffe).
          const T* first = image + (h.lo * width + w.lo) * channels + c;
          const auto first_index =
              static_cast<int32_t>((h.lo - h.start) * kernel_w + w.lo - w.start);
#pragma omp simd
          for (int64_t l = 0; l < n; ++l) {
            best[l] = static_cast<float>(first[l]);
            winner[l] = first_index;
          }
          for (int64_t ih = h.lo; ih < h.hi; ++ih) {
            for (int64_t iw = ih == h.lo ? w.lo + 1 : w.lo; iw < w.hi; ++iw) {
              const T* v = image + (ih * width + iw) * channels + c;
              const auto index = static_cast<int32_t>((ih - h.start) * kernel_w + iw - w.start);
#pragma omp simd
              for (int64_t l = 0; l < n; ++l) {
                // A select for the maximum (MAXPS) and arithmetic for the
                // winner: written as branches or as two selects, GCC masks
                // the stores and tests each vector's mask, 1.7x slower.
                const float value = static_cast<float>(v[l]);
                const float old = best[l];
                const int32_t old_winner = winner[l];
                const int32_t wins = value > old;
                best[l] = wins ? value : old;
                winner[l] = old_winner + wins * (index - old_winner);
              }
            }
          }
          StoreRounded(n, best, y + out + c);  // exact: each is a T
#pragma omp simd
          for (int64_t l = 0; l < n; ++l) window[out + c + l] = static_cast<uint8_t>(winner[l]);
        }
      }
    }
  });
}

template <typename T>
void MaxPoolBackward(const MaxPoolGeometry& g, const T* dy, const uint8_t* window, T* dx) {
  // An input gathers from the outputs covering it (a gather, not Caffe's
  // scatter: each dx element is written once, and threads share nothing).
  const int64_t covering =
      ((g.kernel_h + g.stride_h - 1) / g.stride_h) * ((g.kernel_w + g.stride_w - 1) / g.stride_w);
  const int64_t grain = GrainFor(g.width * g.channels * covering);
  ParallelForVectorized(g.num * g.height, grain, [=](int64_t begin, int64_t end) {
    const int64_t channels = g.channels, pooled_w = g.pooled_w;
    float sum[kChannelChunk];
    for (int64_t row = begin; row < end; ++row) {  // row: (image, ih)
      const int64_t ih = row % g.height;
      const int64_t image_outputs = row / g.height * g.pooled_h * pooled_w * channels;
      const OutputRange oh = CoveringOutputs(ih, g.kernel_h, g.stride_h, g.pad_h, g.pooled_h);
      for (int64_t iw = 0; iw < g.width; ++iw) {
        const OutputRange ow = CoveringOutputs(iw, g.kernel_w, g.stride_w, g.pad_w, pooled_w);
        const int64_t in = (row * g.width + iw) * channels;
        for (int64_t c = 0; c < channels; c += kChannelChunk) {
          const int64_t n = std::min(kChannelChunk, channels - c);
          std::fill_n(sum, n, 0.0f);
          for (int64_t o_h = oh.lo; o_h < oh.hi; ++o_h) {
            for (int64_t o_w = ow.lo; o_w < ow.hi; ++o_w) {
              // This input's place in output (o_h, o_w)'s window.
              const auto index =
                  static_cast<int32_t>((ih - (o_h * g.stride_h - g.pad_h)) * g.kernel_w + iw -
                                       (o_w * g.stride_w - g.pad_w));
              const int64_t out = image_outputs + (o_h * pooled_w + o_w) * channels + c;
              const T* d = dy + out;
              const uint8_t* won = window + out;
              // Adding +0 where another input won leaves a sum as Caffe's.
#pragma omp simd
              for (int64_t l = 0; l < n; ++l) {
                const float routed = static_cast<float>(d[l]);  // loaded either way
                sum[l] += won[l] == index ? routed : 0.0f;
              }
            }
          }
          StoreRounded(n, sum, dx + in + c);
        }
      }
    }
  });
}

}  // namespace

void ChannelsLastMaxPoolForward(const MaxPoolGeometry& g, Type stored, const void* x, void* y,
                                uint8_t* window) {
  VisitStorageType(stored, [&](auto tag) {
    using T = decltype(tag);
    MaxPoolForward(g, static_cast<const T*>(x), static_cast<T*>(y), window);
  });
}

void ChannelsLastMaxPoolBackward(const MaxPoolGeometry& g, Type stored, const void* dy,
                                 const uint8_t* window, void* dx) {
  VisitStorageType(stored, [&](auto tag) {
    using T = decltype(tag);
    MaxPoolBackward(g, static_cast<const T*>(dy), window, static_cast<T*>(dx));
  });
}

}  // namespace demi
