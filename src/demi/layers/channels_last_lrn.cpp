#include "demi/layers/channels_last_lrn.hpp"

#include <algorithm>
#include <cmath>

#include "demi/util/rounded_chunks.hpp"
#include "demi/util/vector_clones.hpp"

namespace demi {

namespace {

/// The most channels a window reaches past a pixel's ends on either side.
constexpr int64_t kMaxLrnHalf = (kMaxLrnSize - 1) / 2;

/// One pixel's runs: `padded` holds kMaxLrnHalf zeros, the channels' terms,
/// and zeros again, so a window past the ends adds zeros.
struct PixelRuns {
  float values[kMaxLrnChannels];
  float padded[kMaxLrnChannels + 2 * kMaxLrnHalf];
  float sums[kMaxLrnChannels];
  float out[kMaxLrnChannels];

  explicit PixelRuns(int64_t channels) { std::fill_n(padded, channels + 2 * kMaxLrnHalf, 0.0f); }

  float* terms() { return padded + kMaxLrnHalf; }

  /// sums[c] = the sum of terms over the `size` channels centred on c, in
  /// window order.
  void WindowSums(int64_t channels, int64_t size) {
    const float* first = padded + kMaxLrnHalf - (size - 1) / 2;
    std::fill_n(sums, channels, 0.0f);
    for (int64_t j = 0; j < size; ++j) {
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) sums[c] += first[c + j];
    }
  }

  /// values = the pixel's x, and sums = its windows' sums of x^2.
  template <typename T>
  void SquareSums(const T* x, int64_t channels, int64_t size) {
    LoadWidened(channels, x, values);
    float* squares = terms();
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) squares[c] = values[c] * values[c];
    WindowSums(channels, size);
  }
};

/// scale^-0.75.
inline float PowMinusThreeQuarters(float scale) {
  const float r = 1.0f / std::sqrt(scale);
  return r * std::sqrt(r);
}

template <typename T>
void LrnForward(const LrnGeometry& g, const T* x, T* y) {
  const auto pixels = [=](int64_t begin, int64_t end) {
    const int64_t channels = g.channels;
    const float a = g.alpha / static_cast<float>(g.size), k = g.k;
    PixelRuns runs(channels);
    for (int64_t p = begin; p < end; ++p) {
      runs.SquareSums(x + p * channels, channels, g.size);
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) {
        runs.out[c] = runs.values[c] * PowMinusThreeQuarters(k + a * runs.sums[c]);
      }
      StoreRounded(channels, runs.out, y + p * channels);
    }
  };
  ParallelForVectorized(g.pixels, GrainFor(g.channels * (g.size + 4)), pixels);
}

template <typename T>
void LrnBackward(const LrnGeometry& g, const T* x, const T* dy, T* dx) {
  const auto pixels = [=](int64_t begin, int64_t end) {
    const int64_t channels = g.channels;
    const float a = g.alpha / static_cast<float>(g.size), k = g.k;
    const float factor = 2.0f * kLrnBeta * a;
    PixelRuns runs(channels);
    float gradients[kMaxLrnChannels], powers[kMaxLrnChannels];
    float* terms = runs.terms();
    for (int64_t p = begin; p < end; ++p) {
      runs.SquareSums(x + p * channels, channels, g.size);
      LoadWidened(channels, dy + p * channels, gradients);
      // dy y / scale = dy x scale^-beta / scale, summed over each window.
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) {
        const float scale = k + a * runs.sums[c];
        powers[c] = PowMinusThreeQuarters(scale);
        terms[c] = gradients[c] * runs.values[c] * powers[c] / scale;
      }
      runs.WindowSums(channels, g.size);
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) {
        runs.out[c] = gradients[c] * powers[c] - factor * runs.values[c] * runs.sums[c];
      }
      StoreRounded(channels, runs.out, dx + p * channels);
    }
  };
  ParallelForVectorized(g.pixels, GrainFor(g.channels * 2 * (g.size + 4)), pixels);
}

}  // namespace

void ChannelsLastLrnForward(const LrnGeometry& g, Type stored, const void* x, void* y) {
  VisitStorageType(stored, [&](auto tag) {
    using T = decltype(tag);
    LrnForward(g, static_cast<const T*>(x), static_cast<T*>(y));
  });
}

void ChannelsLastLrnBackward(const LrnGeometry& g, Type stored, const void* x, const void* dy,
                             void* dx) {
  VisitStorageType(stored, [&](auto tag) {
    using T = decltype(tag);
    LrnBackward(g, static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx));
  });
}

}  // namespace demi
