#ifndef DEMI_PARAM_BLOCK_HPP_
#define DEMI_PARAM_BLOCK_HPP_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "demi/blob.hpp"
#include "demi/util/threads.hpp"
#include "demi/view_block.hpp"

namespace demi {

/// Where one learnable param lives in its net's blocks: floats
/// [offset, offset + count).
struct ParamSegment {
  int64_t offset = 0;
  int64_t count = 0;
};

/// @brief The learnable params of a net as views into one contiguous data
/// block and one diff block, in the order given (the net's layer order, so
/// that the gradients backward finishes are a contiguous suffix: the
/// all-reduce sees a finished bucket as one range, and the solver updates
/// everything in one pass).
///
/// Each param starts 64-byte aligned, as an allocation of its own would;
/// the few floats between params are zeros that every pass may sweep.
/// Shared params are one storage: only owners are laid out. The blobs keep
/// their API, so snapshots, weight files and Python views are unchanged.
class ParamBlock {
 public:
  /// Lays out `params` in order and binds their data and diffs, keeping the
  /// values the params hold.
  void Bind(const std::vector<Blob*>& params);
  /// Binds the data of `blobs` (`sets` groups, each shaped like the params
  /// in their order: the solver's history) as `sets` consecutive copies of
  /// the layout in `block`, keeping their values.
  void BindCopies(const std::vector<std::shared_ptr<Blob>>& blobs, int sets,
                  ViewBlock* block) const;

  const std::vector<ParamSegment>& segments() const { return segments_; }
  /// Floats of one block, gaps included.
  int64_t floats() const { return floats_; }
  ViewBlock& data() { return data_; }
  ViewBlock& diff() { return diff_; }

 private:
  std::vector<ParamSegment> segments_;
  int64_t floats_ = 0;
  ViewBlock data_;
  ViewBlock diff_;
};

/// Runs body(segment index, begin, end) over every segment's floats in one
/// threaded pass: ParallelFor cuts [0, floats) into one contiguous range
/// per thread, and each range visits the pieces of the segments it covers.
/// `Segment` is anything with an offset and a count, in increasing order
/// (ParamSegment, the solver's UpdateRow). Element-wise bodies give the same
/// bits for any thread count.
template <typename Segment, typename Body>
void ParallelForSegments(const std::vector<Segment>& segments, int64_t floats, const Body& body) {
  ParallelFor(floats, [&](int64_t begin, int64_t end) {
    // The first segment that ends after `begin`.
    auto it =
        std::upper_bound(segments.begin(), segments.end(), begin,
                         [](int64_t at, const Segment& s) { return at < s.offset + s.count; });
    for (; it != segments.end() && it->offset < end; ++it) {
      const int64_t from = std::max(begin, it->offset);
      const int64_t to = std::min(end, it->offset + it->count);
      if (from < to) body(static_cast<int>(it - segments.begin()), from, to);
    }
  });
}

}  // namespace demi

#endif  // DEMI_PARAM_BLOCK_HPP_
