#ifndef DEMI_MEMORY_TIMELINE_HPP_
#define DEMI_MEMORY_TIMELINE_HPP_

#include <string>
#include <vector>

#include "demi/memory/liveness.hpp"
#include "demi/memory/planner.hpp"

namespace demi {

class SyncedMemory;

/// One tensor of a timeline: when it lives and where the ARENA plan puts it.
struct TimelineTensor {
  TensorRequest request;  ///< name, bytes, live steps (and gap)
  size_t offset = 0;
  /// "64x3x224x224", filled by the net's side (ReportNetMemory); empty for
  /// the scratch region and memories it does not know.
  std::string shape;
  /// Which memory it is, for the net's side to describe; nullptr: scratch.
  const SyncedMemory* memory = nullptr;
};

/// A schedule step by step, as `memory --timeline` draws it.
struct MemoryTimeline {
  enum StepKind : char { kForward = 'F', kBackward = 'B', kRecompute = 'R' };
  std::vector<std::string> steps;  ///< the layer each step runs
  std::vector<StepKind> kinds;     ///< parallel to steps
  int forward_steps = 0;           ///< steps [0, forward_steps) are the forward pass
  std::vector<size_t> live_bytes;  ///< per step, of the plannable tensors
  std::vector<TimelineTensor> tensors;
  size_t arena_bytes = 0;
  std::vector<std::string> dropped;  ///< recomputed tensors (a recompute timeline)
};

/// The timeline of `net_schedule` run with `replays`: its steps, and the
/// tensors of `liveness` (its liveness with those replays) placed by `plan`.
MemoryTimeline DescribeTimeline(const NetSchedule& net_schedule, const Replays& replays,
                                const NetLiveness& liveness, const Plan& plan);

/// Per step, the bytes of `problem`'s tensors live then (aligned as the
/// arena places them).
std::vector<size_t> LiveBytesPerStep(const Problem& problem, int num_steps);

}  // namespace demi

#endif  // DEMI_MEMORY_TIMELINE_HPP_
