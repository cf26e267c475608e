#ifndef DEMI_UTIL_CHANNEL_BLOCKS_HPP_
#define DEMI_UTIL_CHANNEL_BLOCKS_HPP_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "demi/blob.hpp"
#include "demi/util/rounded_chunks.hpp"
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

/// y[k] = value(k, c) for every element k, c its channel, y stored as float
/// or a 16-bit type. `value` may read y[k] (in place), no other element of y.
template <typename Value>
void StoreChannelElements(const ChannelBlocks& t, float* y, const Value& value) {
  ForEachChannelElement(t, [&](int64_t k, int64_t c) { y[k] = value(k, c); });
}

/// The same into bfloat16 or float16, a chunk of a row at a time
/// (rounded_chunks.hpp; a chunk holds whole channel blocks).
template <typename Half, typename Value>
void StoreChannelElements(const ChannelBlocks& t, Half* y, const Value& value) {
  const int64_t block = t.block, row_size = t.row_size();
  ForEachChannelRow(t, [&](int64_t at, int64_t first) {
    StoreRoundedChunks(at, at + row_size, y, [&](int64_t start, int64_t n, float* chunk) {
      if (block == 1) {  // Caffe's layout: a row is one channel
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) chunk[j] = value(start + j, first);
        return;
      }
      for (int64_t i = 0; i < n; i += block) {
#pragma omp simd
        for (int64_t l = 0; l < block; ++l) chunk[i + l] = value(start + i + l, first + l);
      }
    });
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

/// ChannelSums for terms read from 16-bit types: each row's sum in float
/// (its terms carry 8 or 11 significant bits; float's 24 hold a row's sum to
/// ~1e-4 of its magnitude), the rows' sums in double, in a fixed order. Four float
/// lanes per SSE instruction where double gives two: these loops are
/// compute-bound on a CPU without AVX.
template <typename Term>
void ChannelSumsByRow(const ChannelBlocks& t, double* sums, const Term& term) {
  const int64_t blocks = t.blocks(), block = t.block, inner = t.inner, outer = t.outer;
  ParallelFor(blocks, GrainFor(outer * t.row_size()), [&](int64_t begin, int64_t end) {
    double acc[kMaxChannelBlock];
    float row_acc[kMaxChannelBlock];
    for (int64_t b = begin; b < end; ++b) {
      const int64_t first = b * block;
      std::fill_n(acc, block, 0.0);
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t row = (o * blocks + b) * inner * block;
        if (block == 1) {  // Caffe's layout: a row is one channel
          float sum = 0;
#pragma omp simd reduction(+ : sum)
          for (int64_t i = 0; i < inner; ++i) sum += term(row + i, first);
          acc[0] += sum;
          continue;
        }
        std::fill_n(row_acc, block, 0.0f);
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = row + i * block;
#pragma omp simd
          for (int64_t l = 0; l < block; ++l) row_acc[l] += term(at + l, first + l);
        }
        for (int64_t l = 0; l < block; ++l) acc[l] += row_acc[l];
      }
      std::copy_n(acc, block, sums + first);
    }
  });
}

/// ChannelSums for terms read from blobs stored as float, ChannelSumsByRow
/// from 16-bit types.
template <typename T, typename Term>
void SumChannels(const ChannelBlocks& t, double* sums, const Term& term) {
  if constexpr (!std::is_same_v<T, float>) {
    ChannelSumsByRow(t, sums, term);
  } else {
    ChannelSums(t, sums, term);
  }
}

}  // namespace demi

#endif  // DEMI_UTIL_CHANNEL_BLOCKS_HPP_
