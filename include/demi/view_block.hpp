#ifndef DEMI_VIEW_BLOCK_HPP_
#define DEMI_VIEW_BLOCK_HPP_

#include <cstdint>
#include <memory>
#include <vector>

#include "demi/memory/arena.hpp"
#include "demi/syncedmem.hpp"

namespace demi {

/// @brief Several SyncedMemories bound as views of one contiguous block of
/// floats, so that one pass can sweep them all (the params' data, their
/// gradients, the solver's history) while each blob still reads and writes
/// its own range as before.
///
/// Every view keeps its own head state, so a sweep first brings each view's
/// bytes to the side it runs on and marks it written there (a flag per view
/// when nothing moves); access through the blobs before and after stays
/// coherent. The block is allocated on first access and starts as zeros, so
/// the gaps between views (each view starts 64-byte aligned) are zeros.
class ViewBlock {
 public:
  ViewBlock() = default;
  ViewBlock(const ViewBlock&) = delete;
  ViewBlock& operator=(const ViewBlock&) = delete;

  /// Binds memories[i] to the floats from offsets[i] of a block of `floats`
  /// floats, keeping the content of every memory that has one.
  void Bind(const std::vector<std::shared_ptr<SyncedMemory>>& memories,
            const std::vector<int64_t>& offsets, int64_t floats);
  /// Frees the block when no blob uses its views any more (a test net whose
  /// params were pointed at the train net's); true if it did.
  bool ReleaseIfUnused();

  int64_t floats() const { return floats_; }
  size_t bytes() const { return static_cast<size_t>(floats_) * sizeof(float); }
  /// The whole block on the host (device), every view synced there first;
  /// the mutable forms mark every view as written on that side.
  const float* cpu();
  float* mutable_cpu();
  const float* gpu();
  float* mutable_gpu();

 private:
  /// Throws if a view left the block (a blob reshaped past its size).
  void CheckViewsInBlock() const;

  std::unique_ptr<Arena> arena_ = std::make_unique<Arena>(true);
  std::vector<std::shared_ptr<SyncedMemory>> views_;
  int64_t floats_ = 0;
};

}  // namespace demi

#endif  // DEMI_VIEW_BLOCK_HPP_
