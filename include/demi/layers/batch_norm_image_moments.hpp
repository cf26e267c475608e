#ifndef DEMI_LAYERS_BATCH_NORM_IMAGE_MOMENTS_HPP_
#define DEMI_LAYERS_BATCH_NORM_IMAGE_MOMENTS_HPP_

// BatchNorm's batch mean and variance over 16-bit blobs on the CPU, image
// by image: each (image, channel) row's mean and squared deviations, in
// float, in two passes over the row while it is still in the core's cache
// (the second also sums the deviations, which correct the first's rounded
// mean: the corrected two-pass algorithm); then the rows' moments merged
// per channel in double (Chan, Golub and LeVeque's pairwise formula). One
// read of the batch from memory, where a mean and then a variance over the
// whole batch read it twice. Channel blocks and channels last give the
// same bits: a lane's terms are added in the same order.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "demi/util/channel_blocks.hpp"
#include "demi/util/channels_last_sums.hpp"
#include "demi/util/threads.hpp"
#include "demi/util/vector_clones.hpp"

namespace demi {

/// Each row's moments, [image][channel]: the sum of its values, and of
/// their squared deviations from the row's mean.
struct RowMoments {
  std::vector<double> sums, deviations;
};

/// Row (o, c)'s moments in `rows` from its two passes over `pixels` values:
/// their deviations from `pivot` (the first pass's float mean) summed to
/// `residual`, and their squares to `squares`. The residual moves the
/// pivot to the row's mean, and takes its share off the squares.
inline void StoreRowMoments(double pixels, float pivot, float residual, float squares, double* sum,
                            double* deviations) {
  *sum = pixels * pivot + residual;
  *deviations = squares - static_cast<double>(residual) * residual / pixels;
}

/// The channels a thread takes at once, of one image: a block (nChw16c and
/// narrow channels last), or 128 bytes of a wide channels-last pixel.
inline int64_t ImageMomentLanes(const ChannelBlocks& t) {
  return t.wide_channels_last() ? kLastLanes : t.lanes();
}

/// mean[c] and var[c] from the rows' moments: the sums added image by image
/// in double; each row's deviations, plus pixels x (row mean - mean)^2. The
/// loops run across channels. `scratch` holds 2 C doubles.
inline void MergeRowMoments(int64_t outer, int64_t channels, int64_t inner, const RowMoments& rows,
                            double* scratch, float* mean, float* var) {
  const double m = static_cast<double>(outer * inner);
  if (m == 0) {
    std::fill_n(mean, channels, 0.0f);
    std::fill_n(var, channels, 0.0f);
    return;
  }
  const double pixels = static_cast<double>(inner);
  double* const total = scratch;               // the sums, then the mean
  double* const squares = scratch + channels;  // the squared deviations
  std::fill_n(total, channels, 0.0);
  std::fill_n(squares, channels, 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    const double* sum = rows.sums.data() + o * channels;
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) total[c] += sum[c];
  }
  for (int64_t c = 0; c < channels; ++c) {
    total[c] /= m;
    mean[c] = static_cast<float>(total[c]);
  }
  for (int64_t o = 0; o < outer; ++o) {
    const double* sum = rows.sums.data() + o * channels;
    const double* deviations = rows.deviations.data() + o * channels;
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) {
      const double offset = sum[c] / pixels - total[c];
      squares[c] += deviations[c] + pixels * offset * offset;
    }
  }
  for (int64_t c = 0; c < channels; ++c) var[c] = static_cast<float>(squares[c] / m);
}

/// mean[c] and var[c] (biased) of the batch in x, stored as a 16-bit type
/// T, in any layout: each row's moments, then merged. `scratch` holds 2 C
/// doubles.
template <typename T>
void ImageMoments(const ChannelBlocks& t, const T* x, double* scratch, float* mean, float* var) {
  const int64_t outer = t.outer, channels = t.channels, inner = t.inner, block = t.block;
  // The rows' moments, kept between calls: one buffer a thread for every
  // layer, no allocation while a net runs once the largest has been seen.
  thread_local RowMoments rows;
  rows.sums.resize(outer * channels);
  rows.deviations.resize(outer * channels);
  double* const sums = rows.sums.data();
  double* const deviations = rows.deviations.data();
  const float pixels = static_cast<float>(inner);
  if (block == 1) {  // Caffe's layout: a row is contiguous; threads take rows
    ParallelForVectorized(outer * channels, GrainFor(2 * inner), [=](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* v = x + r * inner;
        float sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t i = 0; i < inner; ++i) sum += static_cast<float>(v[i]);
        const float pivot = sum / pixels;
        float residual = 0, squares = 0;
#pragma omp simd reduction(+ : residual, squares)
        for (int64_t i = 0; i < inner; ++i) {
          const float d = static_cast<float>(v[i]) - pivot;
          residual += d;
          squares += d * d;
        }
        StoreRowMoments(pixels, pivot, residual, squares, sums + r, deviations + r);
      }
    });
  } else {
    // Threads take (image, lanes of channels); lane l of pixel i lies at
    // group_start + i * block + l.
    const int64_t lanes = ImageMomentLanes(t);
    const int64_t groups = (channels + lanes - 1) / lanes;
    ParallelForVectorized(
        outer * groups, GrainFor(2 * inner * lanes), [=](int64_t begin, int64_t end) {
          float sum[kLastLanes], pivot[kLastLanes], residual[kLastLanes], squares[kLastLanes];
          for (int64_t item = begin; item < end; ++item) {
            const int64_t o = item / groups, first = item % groups * lanes;
            const int64_t n = std::min(lanes, channels - first);
            const T* row = x + t.group_start(o, first);
            std::fill_n(sum, n, 0.0f);
            for (int64_t i = 0; i < inner; ++i) {
              const T* v = row + i * block;
#pragma omp simd
              for (int64_t l = 0; l < n; ++l) sum[l] += static_cast<float>(v[l]);
            }
            for (int64_t l = 0; l < n; ++l) pivot[l] = sum[l] / pixels;
            std::fill_n(residual, n, 0.0f);
            std::fill_n(squares, n, 0.0f);
            for (int64_t i = 0; i < inner; ++i) {
              const T* v = row + i * block;
#pragma omp simd
              for (int64_t l = 0; l < n; ++l) {
                const float d = static_cast<float>(v[l]) - pivot[l];
                residual[l] += d;
                squares[l] += d * d;
              }
            }
            const int64_t at = o * channels + first;
            for (int64_t l = 0; l < n; ++l) {
              StoreRowMoments(pixels, pivot[l], residual[l], squares[l], sums + at + l,
                              deviations + at + l);
            }
          }
        });
  }
  MergeRowMoments(outer, channels, inner, rows, scratch, mean, var);
}

}  // namespace demi

#endif  // DEMI_LAYERS_BATCH_NORM_IMAGE_MOMENTS_HPP_
