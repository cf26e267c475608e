#ifndef DEMI_LAYERS_BATCH_NORM_SUMS_HPP_
#define DEMI_LAYERS_BATCH_NORM_SUMS_HPP_

// BatchNorm's per-channel sums on the CPU, in each layout its blobs take:
// the batch's mean and variance of FLOAT blobs in Forward (16-bit blobs':
// batch_norm_image_moments.hpp), and the sums of dy and dy x_hat in
// Backward, in Caffe's layout, channel blocks and channels last, over FLOAT
// and 16-bit blobs. Each adds in a fixed order, so runs repeat bit for
// bit; blocks and channels last give the same bits.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "demi/layers/batch_norm_layer.hpp"
#include "demi/layers/relu_layer.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

/// mean[c] and var[c] (biased) of the batch in x, stored as floats in
/// blocks of channels (block > 1, channels last too), in double lane by
/// lane: each term added in double, the mean's pass and then the
/// variance's, as Caffe's layout does; threads take groups
/// (ChannelBlocks::lanes()), each group's two passes while its rows are
/// fresh. (16-bit blobs: ImageMoments.)
inline void BlockedLayoutMoments(const ChannelBlocks& t, const float* x, float* mean, float* var) {
  const int64_t lanes = t.lanes(), block = t.block, inner = t.inner, outer = t.outer;
  const double m = static_cast<double>(outer * inner);
  const int64_t grain = GrainFor(2 * outer * inner * lanes);
  ParallelForVectorized(t.groups(), grain, [=](int64_t begin, int64_t end) {
    double acc[kMaxChannelBlock];
    float mu[kMaxChannelBlock];
    for (int64_t g = begin; g < end; ++g) {
      const int64_t first = g * lanes, n = std::min(lanes, t.channels - first);
      // acc[l] = the sum of term(value, l) over lane l of the group, in order.
      const auto sum = [&](auto term) {
        std::fill_n(acc, n, 0.0);
        for (int64_t o = 0; o < outer; ++o) {
          const float* row = x + t.group_start(o, first);
          for (int64_t i = 0; i < inner; ++i) {
            const float* v = row + i * block;
#pragma omp simd
            for (int64_t l = 0; l < n; ++l) acc[l] += term(v[l], l);
          }
        }
      };
      sum([](float v, int64_t) { return v; });
      for (int64_t l = 0; l < n; ++l) {
        mu[l] = m > 0 ? static_cast<float>(acc[l] / m) : 0;
        mean[first + l] = mu[l];
      }
      sum([&mu](float v, int64_t l) {
        const float d = v - mu[l];
        return d * d;
      });
      for (int64_t l = 0; l < n; ++l) var[first + l] = m > 0 ? static_cast<float>(acc[l] / m) : 0;
    }
  });
}

/// sum_dy[c] and sum_dy_y[c] over Caffe's layout (num x channels x
/// spatial): threads take channels; each channel's sums add its rows in
/// order.
inline void CaffeLayoutSums(int64_t num, int64_t channels, int64_t spatial, const float* dy,
                            const float* y, double* sum_dy, double* sum_dy_y) {
  const int64_t stride = channels * spatial;
  ParallelFor(channels, GrainFor(2 * num * spatial), [=](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      sum_dy[c] = sum_dy_y[c] = 0;
      for (int64_t n = 0; n < num; ++n) {
        const int64_t at = n * stride + c * spatial;
        sum_dy[c] += LaneSum(spatial, dy + at);
        sum_dy_y[c] += LaneDot(spatial, dy + at, y + at);
      }
    }
  });
}

/// One pixel's terms of BlockedLayoutSums, over its n lanes: g (dy, through
/// the absorbed ReLU where kGated, gamma and beta the lanes' own) added
/// into g_sums, and g x_hat into g_y_sums. Its arguments are the callers'
/// locals, not closure or struct members the sums' stores might alias: GCC
/// vectorizes the loop then. (gamma and beta are read only where kGated.)
template <bool kGated, typename T, typename Sum>
inline void AddGradientTerms(int64_t n, const T* dy, const T* x_hat, const float* gamma,
                             const float* beta, ReLUBackward relu, Sum* g_sums, Sum* g_y_sums) {
#pragma omp simd
  for (int64_t l = 0; l < n; ++l) {
    const float x = static_cast<float>(x_hat[l]);
    const float d = static_cast<float>(dy[l]);
    const float g = kGated ? relu(gamma[l] * x + beta[l], d) : d;
    g_sums[l] += g;
    g_y_sums[l] += g * x;
  }
}

/// sum_g[c] and sum_g_y[c] over blobs in blocks of channels (block > 1,
/// channels last too; threads take groups of ChannelBlocks::lanes()), g
/// = dy, or dy through the absorbed ReLU of `affine` (its gamma and beta
/// given) where kGated; stored as T. The order of
/// ChannelSumsOf for floats (each term added in double) and of
/// ChannelSumsByRowOf for 16-bit types (a row's terms in float, the rows'
/// sums in double), lane by lane, in loops GCC vectorizes (theirs, with
/// std::array terms, it does not).
template <typename T, bool kGated>
void BlockedLayoutSums(const ChannelBlocks& t, const T* dy, const T* y,
                       const BatchNormAffine& affine, double* sum_g, double* sum_g_y) {
  // Floats add every term in double: one running sum a lane over all rows.
  constexpr bool kFloat = std::is_same_v<T, float>;
  using RowSum = std::conditional_t<kFloat, double, float>;
  const int64_t lanes = t.lanes(), block = t.block, inner = t.inner, outer = t.outer;
  if (!kFloat && t.wide_channels_last()) {  // the same sums, image by image
    const auto pixel = [&](int64_t at, int64_t first, int64_t n, float* const* rows) {
      // gamma is null without an affine part: offset only where read.
      const float* gamma = kGated ? affine.gamma + first : nullptr;
      const float* beta = kGated ? affine.beta + first : nullptr;
      AddGradientTerms<kGated>(n, dy + at, y + at, gamma, beta, ReLUBackward{affine.act.slope},
                               rows[0], rows[1]);
    };
    ChannelsLastSumsByImage<2>(outer, t.channels, inner, {sum_g, sum_g_y}, pixel);
    return;
  }
  const int64_t grain = GrainFor(2 * outer * inner * lanes);
  ParallelForVectorized(t.groups(), grain, [=](int64_t begin, int64_t end) {
    double acc_g[kMaxChannelBlock], acc_g_y[kMaxChannelBlock];
    RowSum row_g[kMaxChannelBlock], row_g_y[kMaxChannelBlock];
    float gamma[kMaxChannelBlock] = {}, beta[kMaxChannelBlock] = {};
    const ReLUBackward relu{affine.act.slope};
    for (int64_t g = begin; g < end; ++g) {
      const int64_t first = g * lanes, n = std::min(lanes, t.channels - first);
      std::fill_n(acc_g, n, 0.0);
      std::fill_n(acc_g_y, n, 0.0);
      std::fill_n(row_g, n, RowSum{0});
      std::fill_n(row_g_y, n, RowSum{0});
      if constexpr (kGated) {
        std::copy_n(affine.gamma + first, n, gamma);
        std::copy_n(affine.beta + first, n, beta);
      }
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t row = t.group_start(o, first);
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = row + i * block;
          AddGradientTerms<kGated>(n, dy + at, y + at, gamma, beta, relu, row_g, row_g_y);
        }
        if constexpr (!kFloat) {
          for (int64_t l = 0; l < n; ++l) {
            acc_g[l] += row_g[l];
            acc_g_y[l] += row_g_y[l];
            row_g[l] = row_g_y[l] = 0;
          }
        }
      }
      if constexpr (kFloat) {
        std::copy_n(row_g, n, sum_g + first);
        std::copy_n(row_g_y, n, sum_g_y + first);
      } else {
        std::copy_n(acc_g, n, sum_g + first);
        std::copy_n(acc_g_y, n, sum_g_y + first);
      }
    }
  });
}

}  // namespace demi

#endif  // DEMI_LAYERS_BATCH_NORM_SUMS_HPP_
