#include "demi/memory/planner.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "demi/common.hpp"
#include "demi/util/checked_math.hpp"

namespace demi {

std::vector<std::pair<int, int>> TensorRequest::LiveIntervals() const {
  if (!has_gap()) return {{first_step, last_step}};
  std::vector<std::pair<int, int>> intervals;
  if (first_step < gap_first) intervals.emplace_back(first_step, gap_first - 1);
  if (gap_last < last_step) intervals.emplace_back(gap_last + 1, last_step);
  return intervals;
}

bool LiveTogether(const TensorRequest& a, const TensorRequest& b) {
  if (a.first_step > b.last_step || b.first_step > a.last_step) return false;
  if (!a.has_gap() && !b.has_gap()) return true;
  for (const auto& [a_first, a_last] : a.LiveIntervals()) {
    for (const auto& [b_first, b_last] : b.LiveIntervals()) {
      if (a_first <= b_last && b_first <= a_last) return true;
    }
  }
  return false;
}

namespace {

/// Orders in which the greedy arena places tensors. Which one packs best
/// depends on the graph, so the planner tries each, keeps the smallest, and
/// then improves that order by local search.
enum class PlacementOrder { kSize, kSizeTimesSpan, kSpan, kFirstUse };

/// Larger keys first; ties go to the longer-lived, then the earlier tensor.
std::vector<size_t> OrderTensors(const Problem& problem, PlacementOrder order_by) {
  auto key = [&](const TensorRequest& t) -> double {
    const double bytes = static_cast<double>(AlignedBytes(t.bytes));
    const double span = t.last_step - t.first_step + 1;
    switch (order_by) {
      case PlacementOrder::kSize:
        return bytes;
      case PlacementOrder::kSizeTimesSpan:
        return bytes * span;
      case PlacementOrder::kSpan:
        return span * 1e12 + bytes;  // span, then size
      case PlacementOrder::kFirstUse:
        return -t.first_step * 1e12 + bytes;
    }
    return bytes;
  };
  std::vector<size_t> order(problem.tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const TensorRequest& x = problem.tensors[a];
    const TensorRequest& y = problem.tensors[b];
    if (key(x) != key(y)) return key(x) > key(y);
    const int span_x = x.last_step - x.first_step;
    const int span_y = y.last_step - y.first_step;
    if (span_x != span_y) return span_x > span_y;
    return x.first_step < y.first_step;
  });
  return order;
}

Plan NonePlan(const Problem& problem) {
  Plan plan;
  plan.strategy = PlanStrategy::kNone;
  size_t offset = 0;
  for (const TensorRequest& tensor : problem.tensors) {
    plan.offsets.push_back(offset);
    offset = CheckedAdd(offset, AlignedBytes(tensor.bytes), [&] {
      return StrCat("the NONE plan's bytes up to tensor '", tensor.name, "'");
    });
  }
  plan.arena_bytes = offset;
  return plan;
}

/// Whole-buffer sharing: each tensor, largest first, joins the slot shared
/// by the most tensors among those it is never live together with (so the
/// first tensor of a slot is its largest and nothing grows), or opens one.
Plan SlotsPlan(const Problem& problem) {
  struct Slot {
    size_t bytes;
    std::vector<size_t> members;
  };
  std::vector<Slot> slots;
  std::vector<size_t> slot_of(problem.tensors.size());
  for (size_t t : OrderTensors(problem, PlacementOrder::kSize)) {
    const TensorRequest& tensor = problem.tensors[t];
    int best = -1;
    for (size_t s = 0; s < slots.size(); ++s) {
      const bool free =
          std::none_of(slots[s].members.begin(), slots[s].members.end(),
                       [&](size_t m) { return LiveTogether(problem.tensors[m], tensor); });
      if (!free) continue;
      if (best < 0 || slots[s].members.size() > slots[best].members.size() ||
          (slots[s].members.size() == slots[best].members.size() &&
           slots[s].bytes < slots[best].bytes)) {
        best = static_cast<int>(s);
      }
    }
    if (best < 0) {
      best = static_cast<int>(slots.size());
      slots.push_back({AlignedBytes(tensor.bytes), {}});
    }
    slots[best].members.push_back(t);
    slot_of[t] = static_cast<size_t>(best);
  }
  Plan plan;
  plan.strategy = PlanStrategy::kSlots;
  std::vector<size_t> slot_offset(slots.size());
  for (size_t s = 0; s < slots.size(); ++s) {
    slot_offset[s] = plan.arena_bytes;
    plan.arena_bytes = CheckedAdd(plan.arena_bytes, slots[s].bytes, [&] {
      return StrCat("the SLOTS plan's bytes up to tensor '",
                    problem.tensors[slots[s].members.front()].name, "'");
    });
  }
  for (size_t t = 0; t < problem.tensors.size(); ++t)
    plan.offsets.push_back(slot_offset[slot_of[t]]);
  return plan;
}

/// Offset assignment: each tensor, in `order_by` order, takes a gap between
/// already placed tensors that are live at the same time as it and that it
/// fits in — the smallest such gap (best fit) or the lowest (first fit) — or
/// goes above all of them.
Plan GreedyArenaPlan(const Problem& problem, const std::vector<size_t>& order, bool best_fit) {
  Plan plan;
  plan.strategy = PlanStrategy::kArena;
  plan.offsets.assign(problem.tensors.size(), 0);
  std::vector<size_t> placed;
  for (size_t t : order) {
    const TensorRequest& tensor = problem.tensors[t];
    const size_t bytes = AlignedBytes(tensor.bytes);
    // Byte ranges taken, during this tensor's life, by placed tensors.
    std::vector<std::pair<size_t, size_t>> taken;
    for (size_t p : placed) {
      if (LiveTogether(problem.tensors[p], tensor)) {
        taken.emplace_back(plan.offsets[p],
                           plan.offsets[p] + AlignedBytes(problem.tensors[p].bytes));
      }
    }
    std::sort(taken.begin(), taken.end());
    size_t best_offset = 0;
    size_t best_gap = SIZE_MAX;
    size_t cursor = 0;
    for (const auto& [begin, end] : taken) {
      if (begin > cursor) {
        const size_t gap = begin - cursor;
        if (gap >= bytes && gap < best_gap && (best_fit || best_gap == SIZE_MAX)) {
          best_gap = gap;
          best_offset = cursor;
        }
      }
      cursor = std::max(cursor, end);
    }
    if (best_gap == SIZE_MAX) best_offset = cursor;  // above everything live
    plan.offsets[t] = best_offset;
    const size_t end = CheckedAdd(best_offset, bytes, [&] {
      return StrCat("the ARENA plan's end of tensor '", tensor.name, "'");
    });
    plan.arena_bytes = std::max(plan.arena_bytes, end);
    placed.push_back(t);
  }
  return plan;
}

/// Local search over placement orders: swap two tensors in the order and
/// keep the swap when the greedy plan gets no larger. Stops at the lower
/// bound or after a budget of evaluations that shrinks with the problem's
/// size (each evaluation costs about n^2). Deterministic.
Plan ImproveBySwaps(const Problem& problem, std::vector<size_t> order, bool best_fit, size_t bound,
                    Plan best) {
  const size_t n = order.size();
  if (n < 2) return best;
  const size_t budget = std::clamp<size_t>(2000000 / (n * n), 8, 200);
  std::mt19937 rng(12345);
  std::uniform_int_distribution<size_t> pick(0, n - 1);
  for (size_t round = 0; round < budget && best.arena_bytes > bound; ++round) {
    const size_t i = pick(rng), j = pick(rng);
    if (i == j) continue;
    std::swap(order[i], order[j]);
    Plan candidate = GreedyArenaPlan(problem, order, best_fit);
    if (candidate.arena_bytes <= best.arena_bytes) {
      best = std::move(candidate);
    } else {
      std::swap(order[i], order[j]);
    }
  }
  return best;
}

}  // namespace

size_t AlignedBytes(size_t bytes) {
  DEMI_CHECK(bytes <= SIZE_MAX - (kPlanAlignment - 1), "a tensor of ", bytes,
             " bytes overflows when aligned to ", kPlanAlignment);
  return (bytes + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
}

const char* PlanStrategyName(PlanStrategy strategy) {
  switch (strategy) {
    case PlanStrategy::kNone:
      return "NONE";
    case PlanStrategy::kSlots:
      return "SLOTS";
    case PlanStrategy::kArena:
      return "ARENA";
  }
  return "?";
}

double HeldByteSteps(const Problem& problem) {
  double total = 0;
  for (const TensorRequest& tensor : problem.tensors) {
    for (const auto& [first, last] : tensor.LiveIntervals()) {
      total += static_cast<double>(AlignedBytes(tensor.bytes)) * (last - first + 1);
    }
  }
  return total;
}

size_t LowerBoundBytes(const Problem& problem) {
  // Sweep the interval endpoints: bytes start at first_step and end after
  // last_step. Ends are subtracted before starts are added, so the live
  // figure never exceeds a true one (and is checked for overflow).
  struct Event {
    size_t starting = 0;
    size_t ending = 0;
    const TensorRequest* last_started = nullptr;  // for messages
  };
  std::map<int, Event> events;  // by step
  for (const TensorRequest& tensor : problem.tensors) {
    const size_t bytes = AlignedBytes(tensor.bytes);
    auto what = [&] { return StrCat("the live bytes with tensor '", tensor.name, "'"); };
    for (const auto& [first, last] : tensor.LiveIntervals()) {
      Event& start = events[first];
      start.starting = CheckedAdd(start.starting, bytes, what);
      start.last_started = &tensor;
      Event& end = events[last + 1];
      end.ending = CheckedAdd(end.ending, bytes, what);
    }
  }
  size_t live = 0, peak = 0;
  for (const auto& step : events) {
    const Event& event = step.second;
    live = CheckedAdd(live - event.ending, event.starting, [&] {
      return StrCat("the live bytes when tensor '", event.last_started->name, "' starts");
    });
    peak = std::max(peak, live);
  }
  return peak;
}

Plan SolvePlan(const Problem& problem, PlanStrategy strategy) {
  for (const TensorRequest& tensor : problem.tensors) {
    DEMI_CHECK(tensor.first_step <= tensor.last_step, "tensor '", tensor.name,
               "' has an empty live interval [", tensor.first_step, ", ", tensor.last_step, "]");
    DEMI_CHECK(!tensor.has_gap() ||
                   (tensor.first_step < tensor.gap_first && tensor.gap_last < tensor.last_step),
               "tensor '", tensor.name, "' has a gap [", tensor.gap_first, ", ", tensor.gap_last,
               "] not strictly inside its interval [", tensor.first_step, ", ", tensor.last_step,
               "]");
  }
  Plan plan;
  switch (strategy) {
    case PlanStrategy::kNone:
      plan = NonePlan(problem);
      break;
    case PlanStrategy::kSlots:
      plan = SlotsPlan(problem);
      break;
    case PlanStrategy::kArena: {
      // The best of several greedy orders and fits, and of SLOTS (a valid
      // arena plan too), so ARENA is never worse than SLOTS.
      const size_t bound = LowerBoundBytes(problem);
      std::vector<size_t> best_order;
      bool best_fit_of_best = true;
      for (PlacementOrder order_by : {PlacementOrder::kSize, PlacementOrder::kSizeTimesSpan,
                                      PlacementOrder::kSpan, PlacementOrder::kFirstUse}) {
        const std::vector<size_t> order = OrderTensors(problem, order_by);
        for (bool best_fit : {true, false}) {
          Plan candidate = GreedyArenaPlan(problem, order, best_fit);
          if (best_order.empty() || candidate.arena_bytes < plan.arena_bytes) {
            plan = std::move(candidate);
            best_order = order;
            best_fit_of_best = best_fit;
          }
        }
      }
      if (plan.arena_bytes > bound) {
        plan = ImproveBySwaps(problem, std::move(best_order), best_fit_of_best, bound, plan);
      }
      // SLOTS is a valid arena plan too: ARENA is never worse than SLOTS.
      Plan slots = SlotsPlan(problem);
      if (slots.arena_bytes < plan.arena_bytes) plan = std::move(slots);
      plan.strategy = PlanStrategy::kArena;
      break;
    }
  }
  for (const TensorRequest& tensor : problem.tensors) {
    plan.naive_bytes = CheckedAdd(plan.naive_bytes, AlignedBytes(tensor.bytes), [&] {
      return StrCat("the naive bytes up to tensor '", tensor.name, "'");
    });
  }
  plan.lower_bound_bytes = LowerBoundBytes(problem);
  return plan;
}

std::string CheckPlan(const Problem& problem, const Plan& plan) {
  const auto& tensors = problem.tensors;
  if (plan.offsets.size() != tensors.size()) {
    return StrCat("plan has ", plan.offsets.size(), " offsets for ", tensors.size(), " tensors");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (plan.offsets[i] % kPlanAlignment != 0) {
      return StrCat("tensor '", tensors[i].name, "' is at unaligned offset ", plan.offsets[i]);
    }
    if (plan.offsets[i] > plan.arena_bytes ||
        AlignedBytes(tensors[i].bytes) > plan.arena_bytes - plan.offsets[i]) {
      return StrCat("tensor '", tensors[i].name, "' ends past the arena");
    }
  }
  // Sort by offset so each tensor is compared only with those that start
  // before it ends.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t a = order[i];  // inside the arena (checked above): its end cannot wrap
    const size_t a_end = plan.offsets[a] + AlignedBytes(tensors[a].bytes);
    for (size_t j = i + 1; j < order.size() && plan.offsets[order[j]] < a_end; ++j) {
      const size_t b = order[j];
      if (tensors[a].bytes == 0 || tensors[b].bytes == 0) continue;
      if (LiveTogether(tensors[a], tensors[b])) {
        return StrCat("tensors '", tensors[a].name, "' and '", tensors[b].name,
                      "' are live together and overlap at bytes ", plan.offsets[b]);
      }
    }
  }
  return "";
}

}  // namespace demi
