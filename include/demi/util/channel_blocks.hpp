#ifndef DEMI_UTIL_CHANNEL_BLOCKS_HPP_
#define DEMI_UTIL_CHANNEL_BLOCKS_HPP_

#include <algorithm>
#include <cstdint>

#include "demi/blob.hpp"
#include "demi/util/threads.hpp"

namespace demi {

/// The widest channel block the loops below take (oneDNN's nChw16c).
constexpr int kMaxChannelBlock = 16;

/// A tensor of outer x channels x inner floats whose channels are stored in
/// blocks of `block` innermost (Blob::channel_block()): element (o, c, i)
/// lies at ((o * channels / block + c / block) * inner + i) * block + c % block.
/// A row is one (o, channel block): inner x block floats.
struct ChannelBlocks {
  int64_t outer = 0, channels = 0, inner = 0, block = 1;

  /// Blob `blob` of shape N x C x H x W as N x C x HW in its own layout.
  static ChannelBlocks Of(const Blob& blob) {
    return {blob.shape(0), blob.shape(1), blob.count(2), blob.channel_block()};
  }
  int64_t blocks() const { return channels / block; }
  int64_t row_size() const { return inner * block; }
};

/// Calls body(at, first_channel) for each row, where `at` is the row's first
/// element; threads take rows. Within a row, element at + i * block + l
/// belongs to channel first_channel + l.
template <typename Body>
void ForEachChannelRow(const ChannelBlocks& t, const Body& body) {
  const int64_t blocks = t.blocks(), row_size = t.row_size(), block = t.block;
  ParallelFor(t.outer * blocks, GrainFor(row_size), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) body(r * row_size, r % blocks * block);
  });
}

/// Calls op(k, c) for every element k, c its channel; threads take rows.
template <typename Op>
void ForEachChannelElement(const ChannelBlocks& t, const Op& op) {
  const int64_t block = t.block, row_size = t.row_size();
  if (block == 1) {  // Caffe's layout: a row is one channel
    ForEachChannelRow(t, [&](int64_t at, int64_t c) {
#pragma omp simd
      for (int64_t k = at; k < at + row_size; ++k) op(k, c);
    });
    return;
  }
  ForEachChannelRow(t, [&](int64_t at, int64_t first) {
    for (int64_t i = at; i < at + row_size; i += block) {
#pragma omp simd
      for (int64_t l = 0; l < block; ++l) op(i + l, first + l);
    }
  });
}

/// sums[c] = the sum over channel c's elements k of term(k, c), added in
/// double in a fixed order (so runs repeat bit for bit); threads take
/// channel blocks.
template <typename Term>
void ChannelSums(const ChannelBlocks& t, double* sums, const Term& term) {
  const int64_t blocks = t.blocks(), block = t.block, inner = t.inner, outer = t.outer;
  ParallelFor(blocks, GrainFor(outer * t.row_size()), [&](int64_t begin, int64_t end) {
    double acc[kMaxChannelBlock];
    for (int64_t b = begin; b < end; ++b) {
      const int64_t first = b * block;
      std::fill_n(acc, block, 0.0);
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t row = (o * blocks + b) * inner * block;
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = row + i * block;
#pragma omp simd
          for (int64_t l = 0; l < block; ++l) acc[l] += term(at + l, first + l);
        }
      }
      std::copy_n(acc, block, sums + first);
    }
  });
}

}  // namespace demi

#endif  // DEMI_UTIL_CHANNEL_BLOCKS_HPP_
