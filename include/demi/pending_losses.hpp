#ifndef DEMI_PENDING_LOSSES_HPP_
#define DEMI_PENDING_LOSSES_HPP_

#include <vector>

#include "demi/common.hpp"
#include "demi/syncedmem.hpp"

namespace demi {

/// @brief The losses of a solver's iterations not read back yet: one float
/// each on the net's device, into which Net::ForwardAddingLoss adds, all read
/// in one copy when the solver needs them (to display, test, snapshot or
/// stop) or when `capacity` are pending. On a GPU a loss read every step
/// would make the host wait for the device's forward pass before it queues
/// the backward; with the reads batched, the host queues steps ahead.
class PendingLosses {
 public:
  struct Loss {
    int iteration = 0;
    float value = 0;
  };

  PendingLosses(Device device, int capacity);

  /// A zeroed float on the device for `iteration`'s loss (not full()).
  float* Add(int iteration);
  /// Forgets the last Add (an iteration abandoned between its passes).
  void DropLast();
  /// Forgets them all (those of a Step that failed).
  void Clear() { iterations_.clear(); }
  bool empty() const { return iterations_.empty(); }
  bool full() const { return static_cast<int>(iterations_.size()) >= capacity_; }
  /// The pending losses in the order added, read back (on a GPU, after
  /// everything queued); none is pending after.
  std::vector<Loss> Take();

 private:
  [[maybe_unused]] Device device_;  ///< read in CUDA builds only
  int capacity_;
  SyncedMemory values_;
  std::vector<int> iterations_;
};

}  // namespace demi

#endif  // DEMI_PENDING_LOSSES_HPP_
