#ifndef DEMI_LAYERS_BAD_LABEL_RECORD_HPP_
#define DEMI_LAYERS_BAD_LABEL_RECORD_HPP_

#include <cstdint>
#include <vector>

#include "demi/layer.hpp"
#include "demi/syncedmem.hpp"

namespace demi {

/// @brief A class label outside its classes that a layer's GPU kernels
/// found, kept on the device until the layer's CheckDeferredErrors reads it:
/// labels are checked without a read-back each step. The kernels write it
/// with RecordBadLabel (loss_kernels.cuh): the position in the high 32 bits,
/// the label as a 32-bit integer in the low ones, so that atomicMin keeps the
/// lowest position's among the passes since the last check.
class BadLabelRecord {
 public:
  /// The record's value while no bad label was found.
  static constexpr unsigned long long kNone = ~0ull;

#ifndef CPU_ONLY
  /// The record on the device, set to kNone on first use.
  unsigned long long* gpu();
#endif

  /// Throws CheckClassLabel's error (`classes` classes of scores shaped
  /// `scores_shape`, as the layer is now: the CPU's message) for the
  /// recorded label, if any, clearing the record first, so a caller that
  /// goes on sees a later one.
  void Raise(const Layer& layer, int64_t classes, const std::vector<int64_t>& scores_shape);

 private:
  SyncedMemory record_;
};

}  // namespace demi

#endif  // DEMI_LAYERS_BAD_LABEL_RECORD_HPP_
