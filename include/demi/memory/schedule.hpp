#ifndef DEMI_MEMORY_SCHEDULE_HPP_
#define DEMI_MEMORY_SCHEDULE_HPP_

#include <cstddef>
#include <string>
#include <vector>

#include "demi/memory/planner.hpp"

namespace demi {

/// One memory of a net as the planner sees it: an activation's data or
/// gradient (blobs sharing a memory are one) or a layer's buffer.
struct ScheduledMemory {
  std::string name;  ///< as in messages: "conv1", "conv1 diff", "pool1/mask"
  size_t bytes = 0;
  /// Kept out of the arena whatever its uses: params, net inputs and
  /// outputs, kept blobs.
  bool persistent = false;
  bool saved_buffer = false;  ///< a layer's buffer saved for its backward
};

/// What one layer reads and writes, by index into Schedule::memories.
struct ScheduledLayer {
  std::string name;
  std::vector<int> forward_reads;   ///< bottoms' data
  std::vector<int> forward_writes;  ///< tops' data
  bool runs_backward = false;
  std::vector<int> saved;            ///< written by forward, read by backward
  std::vector<int> backward_reads;   ///< top gradients and the data backward reads
  std::vector<int> backward_writes;  ///< the bottom gradients it computes
  /// Forward may run again during backward and writes the same tops and
  /// saved buffers, changing nothing else (no running statistics, no draw).
  bool replayable = false;
  /// Its replay reads its saved buffers instead of writing them (Dropout
  /// applies the mask it drew).
  bool replay_reads_saved = false;
  double forward_flops = 0;  ///< estimated, for choosing and reporting
  /// Layers sharing a group keep their relative order in any schedule the
  /// planner chooses: what reads and writes do not show changes bits there
  /// (random draws, gradients summed into a shared param, summed losses).
  std::vector<int> order_groups;
};

/// A net's schedule, neutral of Layer and Net: forward steps in layer order,
/// then (with `backward`) a backward step per layer in reverse order.
struct Schedule {
  std::vector<ScheduledMemory> memories;  ///< in first-use order (stable plans)
  std::vector<ScheduledLayer> layers;
  bool backward = false;
  /// One region the layers' per-call scratch buffers share, live throughout
  /// (when some layer has scratch).
  bool has_scratch = false;
  size_t scratch_bytes = 0;
};

/// Per layer, the layers whose forward runs again, in this order, just
/// before that layer's backward step (recomputation); empty: none.
using Replays = std::vector<std::vector<int>>;

/// The planner's problem for a schedule with replays: tensor i is memory
/// `memory_of_tensor[i]` (the scratch region, when there is one, is the
/// last tensor, with index -1). A memory that replays write after its last
/// forward use gets a dead gap from then until its rewrite.
struct ScheduleProblem {
  Problem problem;
  std::vector<int> memory_of_tensor;
  /// Memories outside the plan: persistent ones and those read before
  /// anything writes them (they keep their zero-filled contents).
  std::vector<int> persistent_memories;
  int num_steps = 0;
};

ScheduleProblem LivenessProblem(const Schedule& schedule, const Replays& replays = {});

}  // namespace demi

#endif  // DEMI_MEMORY_SCHEDULE_HPP_
