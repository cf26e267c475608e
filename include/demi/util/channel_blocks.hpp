#ifndef DEMI_UTIL_CHANNEL_BLOCKS_HPP_
#define DEMI_UTIL_CHANNEL_BLOCKS_HPP_

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

#include "demi/blob.hpp"
#include "demi/util/channels_last_sums.hpp"
#include "demi/util/rounded_chunks.hpp"
#include "demi/util/threads.hpp"
#include "demi/util/vector_clones.hpp"

namespace demi {

/// The most channels a sum below takes at once: a block of oneDNN's
/// nChw16c, or 16 of a pixel's channels where they are stored last.
constexpr int kMaxChannelBlock = 16;

/// Whether `blob` holds the same bytes channels last (NHWC, the GPU's block
/// of all channels) as in Caffe's layout: a 4-D blob of one channel or one
/// pixel.
inline bool SameBytesChannelsLast(const Blob& blob) {
  return blob.num_axes() == 4 && (blob.shape(1) == 1 || blob.count(2) == 1);
}

/// Whether `blob`'s bytes lie channels last (NHWC), whatever layout it is
/// said to hold: channels last, a block of all its channels (16 in
/// nChw16c), or the same bytes in Caffe's layout. Our channels-last kernels
/// take such a blob.
inline bool HoldsChannelsLast(const Blob& blob) {
  return blob.num_axes() == 4 &&
         (blob.channel_block() == blob.shape(1) || SameBytesChannelsLast(blob));
}

/// A tensor of outer x channels x inner floats whose channels are stored in
/// blocks of `block` innermost (Blob::channel_block()): element (o, c, i)
/// lies at ((o * channels / block + c / block) * inner + i) * block + c % block.
/// A row is one (o, channel block): inner x block floats. A block of all the
/// channels is channels last (NHWC).
struct ChannelBlocks {
  int64_t outer = 0, channels = 0, inner = 0, block = 1;

  /// Blob `blob` of shape N x C x H x W as N x C x HW in its own layout.
  static ChannelBlocks Of(const Blob& blob) {
    return {blob.shape(0), blob.shape(1), blob.count(2), blob.channel_block()};
  }
  int64_t blocks() const { return channels / block; }
  int64_t row_size() const { return inner * block; }
  /// The channels a sum takes at once (a group): a block, or of a block
  /// wider than kMaxChannelBlock (channels last), that many; the last group
  /// may have fewer.
  int64_t lanes() const { return std::min<int64_t>(block, kMaxChannelBlock); }
  int64_t groups() const { return (channels + lanes() - 1) / lanes(); }
  /// Where the group from channel `first` starts in row o: its lane l of
  /// pixel i lies at group_start + i * block + l.
  int64_t group_start(int64_t o, int64_t first) const {
    return (o * blocks() + first / block) * inner * block + first % block;
  }
  /// Channels last with more channels than one group: 16-bit sums go
  /// through ChannelsLastSumsByImage (channels_last_sums.hpp).
  bool wide_channels_last() const { return block == channels && channels > kMaxChannelBlock; }
};

/// Calls piece(i, m, lane) for the runs of chunk [0, n) that lie in one
/// pixel of a block, where the chunk starts `offset` elements into a run of
/// ForEachChannelRow (which starts at a pixel):
/// the chunk's elements i .. i + m - 1 are that pixel's lanes lane .. lane + m - 1.
template <typename Piece>
void ForEachPixelRun(int64_t offset, int64_t n, int64_t block, const Piece& piece) {
  int64_t lane = offset % block;
  for (int64_t i = 0; i < n; lane = 0) {
    const int64_t m = std::min(block - lane, n - i);
    piece(i, m, lane);
    i += m;
  }
}

/// Calls body(at, size, first_channel) for runs of `size` elements from `at`;
/// threads take runs. Within a run, element at + i * block + l belongs to
/// channel first_channel + l. A run is a row, or channels last
/// (wide_channels_last) whole pixels, of one image or more, so that threads
/// share an image (a batch of one). The loops here and below run in the CPU's
/// widest vectors (ParallelForVectorized).
template <typename Body>
void ForEachChannelRow(const ChannelBlocks& t, const Body& body) {
  const int64_t blocks = t.blocks(), row_size = t.row_size(), block = t.block;
  if (t.wide_channels_last()) {
    ParallelForVectorized(t.outer * t.inner, GrainFor(block), [&](int64_t begin, int64_t end) {
      body(begin * block, (end - begin) * block, 0);
    });
    return;
  }
  ParallelForVectorized(t.outer * blocks, GrainFor(row_size), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) body(r * row_size, row_size, r % blocks * block);
  });
}

/// Calls op(k, c) for every element k, c its channel; threads take runs.
template <typename Op>
void ForEachChannelElement(const ChannelBlocks& t, const Op& op) {
  const int64_t block = t.block;
  if (block == 1) {  // Caffe's layout: a row is one channel
    ForEachChannelRow(t, [&](int64_t at, int64_t size, int64_t c) {
#pragma omp simd
      for (int64_t k = at; k < at + size; ++k) op(k, c);
    });
    return;
  }
  ForEachChannelRow(t, [&](int64_t at, int64_t size, int64_t first) {
    for (int64_t i = at; i < at + size; i += block) {
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
/// (rounded_chunks.hpp).
template <typename Half, typename Value>
void StoreChannelElements(const ChannelBlocks& t, Half* y, const Value& value) {
  const int64_t block = t.block;
  ForEachChannelRow(t, [&](int64_t at, int64_t size, int64_t first) {
    StoreRoundedChunks(at, at + size, y, [&](int64_t start, int64_t n, float* chunk) {
      if (block == 1) {  // Caffe's layout: a row is one channel
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) chunk[j] = value(start + j, first);
        return;
      }
      ForEachPixelRun(start - at, n, block, [&](int64_t i, int64_t m, int64_t lane) {
#pragma omp simd
        for (int64_t l = 0; l < m; ++l) chunk[i + l] = value(start + i + l, first + lane + l);
      });
    });
  });
}

/// y[k] and z[k] from one values(k, c) = {y's, z's} (std::array<float, 2>)
/// for every element k, c its channel, both stored as T (float or 16-bit):
/// two outputs in one pass over the inputs.
template <typename T, typename Values>
void StoreChannelElementPairs(const ChannelBlocks& t, T* y, T* z, const Values& values) {
  if constexpr (std::is_same_v<T, float>) {
    ForEachChannelElement(t, [&](int64_t k, int64_t c) {
      const std::array<float, 2> v = values(k, c);
      y[k] = v[0];
      z[k] = v[1];
    });
  } else {
    const int64_t block = t.block;
    ForEachChannelRow(t, [&](int64_t at, int64_t size, int64_t first) {
      float for_y[kRoundedChunk], for_z[kRoundedChunk];
      for (int64_t start = at; start < at + size; start += kRoundedChunk) {
        const int64_t n = std::min(kRoundedChunk, at + size - start);
        const auto one = [&](int64_t i, int64_t c) {
          const std::array<float, 2> v = values(start + i, c);
          for_y[i] = v[0];
          for_z[i] = v[1];
        };
        if (block == 1) {  // Caffe's layout: a row is one channel
#pragma omp simd
          for (int64_t i = 0; i < n; ++i) one(i, first);
        } else {
          ForEachPixelRun(start - at, n, block, [&](int64_t i, int64_t m, int64_t lane) {
#pragma omp simd
            for (int64_t l = 0; l < m; ++l) one(i + l, first + lane + l);
          });
        }
        StoreRounded(n, for_y, y + start);
        StoreRounded(n, for_z, z + start);
      }
    });
  }
}

/// z[k] = first(k, c) and then y[k] = then(z[k] as stored, c) for every
/// element k, c its channel, both stored as T, in one pass over the inputs:
/// `then` reads first's value rounded to T (for float, as computed), so
/// that it sees what a later reader of z will.
template <typename T, typename First, typename Then>
void StoreChannelElementChain(const ChannelBlocks& t, T* z, T* y, const First& first,
                              const Then& then) {
  if constexpr (std::is_same_v<T, float>) {
    ForEachChannelElement(t, [&](int64_t k, int64_t c) {
      const float v = first(k, c);
      z[k] = v;
      y[k] = then(v, c);
    });
  } else {
    const int64_t block = t.block;
    // Fills chunk[i] = value(i, channel of element start + i), the chunk
    // starting `offset` elements into its run.
    const auto fill = [block](int64_t offset, int64_t n, int64_t first_channel, float* chunk,
                              const auto& value) {
      if (block == 1) {  // Caffe's layout: a row is one channel
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) chunk[i] = value(i, first_channel);
        return;
      }
      ForEachPixelRun(offset, n, block, [&](int64_t i, int64_t m, int64_t lane) {
#pragma omp simd
        for (int64_t l = 0; l < m; ++l) chunk[i + l] = value(i + l, first_channel + lane + l);
      });
    };
    ForEachChannelRow(t, [&](int64_t at, int64_t size, int64_t first_channel) {
      float chunk[kRoundedChunk];
      for (int64_t start = at; start < at + size; start += kRoundedChunk) {
        const int64_t n = std::min(kRoundedChunk, at + size - start);
        fill(start - at, n, first_channel, chunk,
             [&](int64_t i, int64_t c) { return first(start + i, c); });
        StoreRounded(n, chunk, z + start);
        const T* stored = z + start;
        fill(start - at, n, first_channel, chunk,
             [&](int64_t i, int64_t c) { return then(static_cast<float>(stored[i]), c); });
        StoreRounded(n, chunk, y + start);
      }
    });
  }
}

/// K sums a channel, taken in one pass: terms(k, c) returns the K terms of
/// element k (std::array<float, K>), and sums[j][c] gets the sum of term j
/// over channel c.
template <int K>
using ChannelSumOutputs = std::array<double*, K>;

/// sums[j][c] = the sum over channel c's elements k of terms(k, c)[j], added
/// in double in a fixed order, (o, i) (so runs repeat bit for bit, and a
/// channel-blocked or channels-last layout gives the same sums); threads
/// take groups of channels (ChannelBlocks::lanes()).
template <int K, typename Terms>
void ChannelSumsOf(const ChannelBlocks& t, const ChannelSumOutputs<K>& sums, const Terms& terms) {
  const int64_t lanes = t.lanes(), block = t.block, inner = t.inner, outer = t.outer;
  const int64_t grain = GrainFor(K * outer * inner * lanes);
  ParallelForVectorized(t.groups(), grain, [&](int64_t begin, int64_t end) {
    double acc[K][kMaxChannelBlock];
    for (int64_t g = begin; g < end; ++g) {
      const int64_t first = g * lanes, n = std::min(lanes, t.channels - first);
      for (auto& lane : acc) std::fill_n(lane, n, 0.0);
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t row = t.group_start(o, first);
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = row + i * block;
#pragma omp simd
          for (int64_t l = 0; l < n; ++l) {
            const std::array<float, K> term = terms(at + l, first + l);
            for (int j = 0; j < K; ++j) acc[j][l] += term[j];
          }
        }
      }
      for (int j = 0; j < K; ++j) std::copy_n(acc[j], n, sums[j] + first);
    }
  });
}

/// ChannelSumsOf for terms read from 16-bit types: each row's sums in float
/// (its terms carry 8 or 11 significant bits; float's 24 hold a row's sum to
/// ~1e-4 of its magnitude), the rows' sums in double, in a fixed order. Four
/// float lanes per SSE instruction where double gives two: these loops are
/// compute-bound on a CPU without AVX.
template <int K, typename Terms>
void ChannelSumsByRowOf(const ChannelBlocks& t, const ChannelSumOutputs<K>& sums,
                        const Terms& terms) {
  if (t.wide_channels_last()) {
    ChannelsLastSumsByImage<K>(t.outer, t.channels, t.inner, sums,
                               [&](int64_t at, int64_t first, int64_t n, float* const* rows) {
#pragma omp simd
                                 for (int64_t l = 0; l < n; ++l) {
                                   const std::array<float, K> term = terms(at + l, first + l);
                                   for (int j = 0; j < K; ++j) rows[j][l] += term[j];
                                 }
                               });
    return;
  }
  const int64_t lanes = t.lanes(), block = t.block, inner = t.inner, outer = t.outer;
  const int64_t grain = GrainFor(K * outer * inner * lanes);
  ParallelForVectorized(t.groups(), grain, [&](int64_t begin, int64_t end) {
    double acc[K][kMaxChannelBlock];
    float row_acc[K][kMaxChannelBlock];
    for (int64_t g = begin; g < end; ++g) {
      const int64_t first = g * lanes, n = std::min(lanes, t.channels - first);
      for (auto& lane : acc) std::fill_n(lane, n, 0.0);
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t row = t.group_start(o, first);
        if (block == 1) {  // Caffe's layout: a row is one channel
          float sum[K] = {};
#pragma omp simd reduction(+ : sum[:K])
          for (int64_t i = 0; i < inner; ++i) {
            const std::array<float, K> term = terms(row + i, first);
            for (int j = 0; j < K; ++j) sum[j] += term[j];
          }
          for (int j = 0; j < K; ++j) acc[j][0] += sum[j];
          continue;
        }
        for (auto& lane : row_acc) std::fill_n(lane, n, 0.0f);
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = row + i * block;
#pragma omp simd
          for (int64_t l = 0; l < n; ++l) {
            const std::array<float, K> term = terms(at + l, first + l);
            for (int j = 0; j < K; ++j) row_acc[j][l] += term[j];
          }
        }
        for (int j = 0; j < K; ++j) {
          for (int64_t l = 0; l < n; ++l) acc[j][l] += row_acc[j][l];
        }
      }
      for (int j = 0; j < K; ++j) std::copy_n(acc[j], n, sums[j] + first);
    }
  });
}

/// ChannelSumsOf for terms read from blobs stored as float,
/// ChannelSumsByRowOf from 16-bit types.
template <typename T, int K, typename Terms>
void SumChannelsOf(const ChannelBlocks& t, const ChannelSumOutputs<K>& sums, const Terms& terms) {
  if constexpr (!std::is_same_v<T, float>) {
    ChannelSumsByRowOf<K>(t, sums, terms);
  } else {
    ChannelSumsOf<K>(t, sums, terms);
  }
}

/// One sum a channel: sums[c] = the sum of term(k, c) over channel c.
template <typename Term>
void ChannelSums(const ChannelBlocks& t, double* sums, const Term& term) {
  ChannelSumsOf<1>(t, {sums}, [&](int64_t k, int64_t c) {
    return std::array<float, 1>{static_cast<float>(term(k, c))};
  });
}
template <typename T, typename Term>
void SumChannels(const ChannelBlocks& t, double* sums, const Term& term) {
  SumChannelsOf<T, 1>(t, {sums}, [&](int64_t k, int64_t c) {
    return std::array<float, 1>{static_cast<float>(term(k, c))};
  });
}

}  // namespace demi

#endif  // DEMI_UTIL_CHANNEL_BLOCKS_HPP_
