#ifndef DEMI_MEMORY_LIVENESS_HPP_
#define DEMI_MEMORY_LIVENESS_HPP_

#include <string>
#include <vector>

#include "demi/memory/planner.hpp"
#include "demi/memory/schedule.hpp"
#include "demi/syncedmem.hpp"

namespace demi {

/// A net's schedule with the SyncedMemory behind each of its memories.
struct NetSchedule {
  std::string net_name;  ///< for messages
  Schedule schedule;
  std::vector<SyncedMemory*> memories;  ///< parallel to schedule.memories
  /// Per-call scratch buffers: only one layer runs at a time, so the layers
  /// share one region of `schedule.scratch_bytes`. Inside it, one layer's
  /// buffers sit side by side at `scratch_offsets`, since a layer may use
  /// them together.
  std::vector<SyncedMemory*> scratch_memories;
  std::vector<size_t> scratch_offsets;
};

/// A net's memory as the planner sees it: one request per plannable
/// SyncedMemory (blobs sharing a memory — in place, Split, Flatten — are one
/// tensor), parallel to `memories`; the scratch region, when some layer has
/// scratch, is the last tensor of the problem.
struct NetLiveness {
  Problem problem;
  std::vector<SyncedMemory*> memories;
  std::vector<SyncedMemory*> scratch_memories;
  std::vector<size_t> scratch_offsets;
  size_t scratch_bytes = 0;
  /// Bytes kept out of the plan: params and their gradients, net inputs and
  /// outputs, kept blobs, and memories read before anything writes them.
  size_t persistent_bytes = 0;
  std::vector<SyncedMemory*> persistent_memories;  ///< the memories behind persistent_bytes
  int num_steps = 0;
};

/// The liveness of `net`'s schedule, with `replays` (recomputation) run
/// before the backward steps they belong to.
NetLiveness AnalyzeLiveness(const NetSchedule& net_schedule, const Replays& replays = {});

}  // namespace demi

#endif  // DEMI_MEMORY_LIVENESS_HPP_
