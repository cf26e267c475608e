#ifndef DEMI_MEMORY_RECOMPUTE_HPP_
#define DEMI_MEMORY_RECOMPUTE_HPP_

#include <cstddef>
#include <string>
#include <vector>

#include "demi/memory/planner.hpp"
#include "demi/memory/schedule.hpp"

namespace demi {

/// Which activations a net drops after forward and recomputes during
/// backward to fit a memory budget (Chen et al. 2016, "Training Deep Nets
/// with Sublinear Memory Cost"), and what that costs.
struct Recomputation {
  std::vector<int> dropped;          ///< memory indices, in the order chosen
  Replays replays;                   ///< per layer; empty when nothing is dropped
  int replayed_layers = 0;           ///< forward steps run again per iteration
  double forward_flops = 0;          ///< of one forward pass (estimated)
  double extra_flops = 0;            ///< of the replays (estimated)
  Plan plan;                         ///< the arena plan with the replays
  size_t unplanned_arena_bytes = 0;  ///< the arena without recomputation
  /// Whether `plan` fits the budget; if not, it is the smallest arena the
  /// choice reached.
  bool fits = true;
};

/// The replays that recompute the `dropped` memories (indexed like
/// schedule.memories) just before the first backward step that needs them:
/// a backward step reading one, or of a layer writing one. A memory is
/// recomputed by running every layer that writes it, in forward order, after
/// the dropped memories those layers read.
Replays ReplaysFor(const Schedule& schedule, const std::vector<bool>& dropped);

/// Whether memory `m` can be dropped: an activation (not persistent, not a
/// layer buffer) every writer of which can replay, reading only memories
/// that hold their final values when it runs.
bool CanDrop(const Schedule& schedule, int m);

/// Chooses what to drop so that the arena plan of `schedule` fits `budget`
/// bytes: candidates cheapest first (estimated forward FLOPs of the layers
/// recomputing them, per byte), each kept when it lowers the schedule's
/// lower bound (or, at an equal bound, the bytes-times-steps it holds);
/// element-wise and normalisation outputs over a kept convolution cost
/// little, whole segments between kept activations come after. With the
/// budget already met, drops nothing; when no choice fits, returns the
/// smallest arena it reached with `fits` false. A budget of 1 byte asks for
/// that smallest arena.
Recomputation ChooseRecomputation(const Schedule& schedule, size_t budget);

}  // namespace demi

#endif  // DEMI_MEMORY_RECOMPUTE_HPP_
