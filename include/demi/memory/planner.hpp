#ifndef DEMI_MEMORY_PLANNER_HPP_
#define DEMI_MEMORY_PLANNER_HPP_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace demi {

/// One tensor the planner places: `bytes` live over steps [first_step,
/// last_step] (inclusive) of a schedule, except over an optional dead gap
/// [gap_first, gap_last] inside it: an activation dropped after its last
/// forward use and recomputed before backward reads it. The tensor keeps
/// one offset; others may use its bytes during the gap.
struct TensorRequest {
  std::string name;  ///< for reports only
  size_t bytes = 0;
  int first_step = 0;
  int last_step = 0;
  int gap_first = 0;
  int gap_last = -1;  ///< gap_last < gap_first: no gap

  bool has_gap() const { return gap_first <= gap_last; }
  bool LiveAt(int step) const {
    return first_step <= step && step <= last_step && !(gap_first <= step && step <= gap_last);
  }
  /// Steps it is live over, one interval or two around the gap.
  std::vector<std::pair<int, int>> LiveIntervals() const;
};

/// True when `a` and `b` are live at a common step.
bool LiveTogether(const TensorRequest& a, const TensorRequest& b);

/// What to plan: the tensors of one net's schedule. Pure data — nothing of
/// Layer, Net or CUDA — so the planner is tested on synthetic graphs.
struct Problem {
  std::vector<TensorRequest> tensors;
};

enum class PlanStrategy {
  kNone,   ///< every tensor its own memory (Caffe's behaviour, the baseline)
  kSlots,  ///< whole buffers shared by tensors that are never live together
  kArena,  ///< offsets in one arena, greedy by size with best fit (the default)
};

/// Where each tensor lives: tensor i occupies [offsets[i], offsets[i] +
/// aligned bytes) of one arena of `arena_bytes`.
struct Plan {
  PlanStrategy strategy = PlanStrategy::kArena;
  std::vector<size_t> offsets;
  size_t arena_bytes = 0;        ///< planned bytes
  size_t naive_bytes = 0;        ///< sum of all tensors (NONE)
  size_t lower_bound_bytes = 0;  ///< max over steps of live bytes
};

/// Offsets and sizes are multiples of this, for SIMD and cache lines.
constexpr size_t kPlanAlignment = 64;
size_t AlignedBytes(size_t bytes);

/// Places every tensor of `problem` with `strategy`. ARENA takes the best of
/// its offset assignment and the SLOTS plan, so it is never worse than SLOTS,
/// which is never worse than NONE; no plan is below the lower bound.
Plan SolvePlan(const Problem& problem, PlanStrategy strategy);

/// Max over steps of the aligned bytes live at that step.
size_t LowerBoundBytes(const Problem& problem);

/// Aligned bytes times steps held, summed over tensors: what a schedule
/// frees early even where its peak stays.
double HeldByteSteps(const Problem& problem);

/// Empty if no two tensors live at a common step overlap in bytes and every
/// tensor lies inside the arena; otherwise a description of the first fault.
std::string CheckPlan(const Problem& problem, const Plan& plan);

const char* PlanStrategyName(PlanStrategy strategy);

}  // namespace demi

#endif  // DEMI_MEMORY_PLANNER_HPP_
