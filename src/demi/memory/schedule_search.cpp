#include "demi/memory/schedule_search.hpp"

#include <algorithm>
#include <numeric>

#include "demi/memory/planner.hpp"
#include "demi/memory/schedule_order.hpp"

namespace demi {

namespace {

/// What the search minimises: the peak first, then bytes held over time,
/// which moves toward a lower peak across plateaus.
struct OrderScore {
  size_t bound = 0;
  double held = 0;
  bool operator<(const OrderScore& other) const {
    return bound != other.bound ? bound < other.bound : held < other.held;
  }
};

/// LivenessProblem's lower bound and held byte-steps for a schedule run in
/// another order, without building the reordered schedule: the search
/// evaluates thousands of orders. Tests check it against LivenessProblem.
class OrderEvaluator {
 public:
  explicit OrderEvaluator(const Schedule& schedule)
      : backward_(schedule.backward),
        scratch_bytes_(schedule.has_scratch ? AlignedBytes(schedule.scratch_bytes) : 0),
        forward_uses_(schedule.layers.size()),
        backward_uses_(schedule.layers.size()) {
    for (const ScheduledMemory& memory : schedule.memories) {
      bytes_.push_back(AlignedBytes(memory.bytes));
      persistent_.push_back(memory.persistent);
    }
    for (size_t i = 0; i < schedule.layers.size(); ++i) {
      const ScheduledLayer& layer = schedule.layers[i];
      for (int m : layer.forward_reads) forward_uses_[i].push_back({m, false});
      for (int m : layer.forward_writes) forward_uses_[i].push_back({m, true});
      if (!layer.runs_backward) continue;
      for (int m : layer.saved) forward_uses_[i].push_back({m, true});
      for (int m : layer.saved) backward_uses_[i].push_back({m, false});
      for (int m : layer.backward_reads) backward_uses_[i].push_back({m, false});
      for (int m : layer.backward_writes) backward_uses_[i].push_back({m, true});
    }
  }

  OrderScore Evaluate(const std::vector<int>& order) {
    const size_t num_memories = bytes_.size();
    first_.assign(num_memories, -1);
    last_.assign(num_memories, -1);
    first_writes_.assign(num_memories, false);
    int step = 0;
    for (int layer : order) Record(forward_uses_[layer], step++);
    if (backward_) {
      for (auto it = order.rbegin(); it != order.rend(); ++it) Record(backward_uses_[*it], step++);
    }
    const int num_steps = step;
    live_change_.assign(num_steps + 1, 0);
    OrderScore score;
    for (size_t m = 0; m < num_memories; ++m) {
      if (first_[m] < 0 || persistent_[m] || !first_writes_[m]) continue;
      Hold(bytes_[m], first_[m], last_[m], &score);
    }
    if (scratch_bytes_ > 0) Hold(scratch_bytes_, 0, std::max(num_steps - 1, 0), &score);
    int64_t live = 0;
    for (int s = 0; s < num_steps; ++s) {
      live += live_change_[s];
      score.bound = std::max(score.bound, static_cast<size_t>(live));
    }
    return score;
  }

 private:
  struct Use {
    int memory;
    bool writes;
  };

  void Record(const std::vector<Use>& uses, int step) {
    for (const Use& use : uses) {
      if (first_[use.memory] < 0) {
        first_[use.memory] = step;
        first_writes_[use.memory] = use.writes;
      } else if (first_[use.memory] == step) {
        first_writes_[use.memory] = first_writes_[use.memory] || use.writes;
      }
      last_[use.memory] = step;
    }
  }

  void Hold(size_t bytes, int first, int last, OrderScore* score) {
    live_change_[first] += static_cast<int64_t>(bytes);
    live_change_[last + 1] -= static_cast<int64_t>(bytes);
    score->held += static_cast<double>(bytes) * (last - first + 1);
  }

  bool backward_;
  size_t scratch_bytes_;
  std::vector<size_t> bytes_;
  std::vector<bool> persistent_;
  std::vector<std::vector<Use>> forward_uses_, backward_uses_;
  std::vector<int> first_, last_;
  std::vector<bool> first_writes_;
  std::vector<int64_t> live_change_;
};

class OrderSearch {
 public:
  OrderSearch(const Schedule& schedule, int max_evaluations)
      : evaluator_(schedule),
        constraints_(ConstrainOrder(schedule)),
        max_evaluations_(max_evaluations) {}

  OrderScore Evaluate(const std::vector<int>& order) {
    ++evaluations_;
    return evaluator_.Evaluate(order);
  }

  /// Improves `order` in place until no move helps or the evaluations run out.
  void Improve(std::vector<int>* order, OrderScore* score) {
    bool improved = true;
    while (improved && evaluations_ < max_evaluations_) {
      improved = false;
      for (int first = 0; first < static_cast<int>(order->size()); ++first) {
        if (evaluations_ >= max_evaluations_) break;
        if (TryMovesFrom(first, order, score)) improved = true;
      }
    }
  }

  int evaluations() const { return evaluations_; }
  const OrderConstraints& constraints() const { return constraints_; }

 private:
  /// Tries the segments starting at step `first` (the layer alone, and the
  /// chain of dependent layers it begins) at every step they may start at;
  /// keeps the first move that helps.
  bool TryMovesFrom(int first, std::vector<int>* order, OrderScore* score) {
    const std::vector<int> position = Positions(*order);
    int chain_last = first;
    while (chain_last + 1 < static_cast<int>(order->size()) &&
           DependsOn((*order)[chain_last + 1], (*order)[chain_last])) {
      ++chain_last;
    }
    for (int last : {first, chain_last}) {
      const int length = last - first + 1;
      int earliest = constraints_.pinned_prefix, latest_end = static_cast<int>(order->size()) - 1;
      for (int step = first; step <= last; ++step) {
        const int layer = (*order)[step];
        for (int before : constraints_.predecessors[layer]) {
          if (position[before] < first) earliest = std::max(earliest, position[before] + 1);
        }
        for (int after : constraints_.successors[layer]) {
          if (position[after] > last) latest_end = std::min(latest_end, position[after] - 1);
        }
      }
      const int latest = latest_end - length + 1;
      for (int start = earliest; start <= latest; ++start) {
        if (start == first) continue;
        std::vector<int> candidate = Moved(*order, first, length, start);
        const OrderScore candidate_score = Evaluate(candidate);
        if (candidate_score < *score) {
          *order = std::move(candidate);
          *score = candidate_score;
          return true;
        }
        if (evaluations_ >= max_evaluations_) return false;
      }
      if (chain_last == first) break;
    }
    return false;
  }

  bool DependsOn(int layer, int before) const {
    const auto& predecessors = constraints_.predecessors[layer];
    return std::find(predecessors.begin(), predecessors.end(), before) != predecessors.end();
  }

  static std::vector<int> Positions(const std::vector<int>& order) {
    std::vector<int> position(order.size());
    for (size_t step = 0; step < order.size(); ++step)
      position[order[step]] = static_cast<int>(step);
    return position;
  }

  /// `order` with the `length` layers from step `first` moved to start at
  /// step `start` (the steps between shift over).
  static std::vector<int> Moved(const std::vector<int>& order, int first, int length, int start) {
    std::vector<int> result(order);
    auto begin = result.begin();
    if (start < first) {
      std::rotate(begin + start, begin + first, begin + first + length);
    } else {
      std::rotate(begin + first, begin + first + length, begin + start + length);
    }
    return result;
  }

  OrderEvaluator evaluator_;
  const OrderConstraints constraints_;
  const int max_evaluations_;
  int evaluations_ = 0;
};

size_t PlannedBytes(const Schedule& schedule, const std::vector<int>& order) {
  const Problem problem = LivenessProblem(Reordered(schedule, order)).problem;
  return SolvePlan(problem, PlanStrategy::kArena).arena_bytes;
}

}  // namespace

ScheduleChoice ChooseOrder(const Schedule& schedule, int max_evaluations) {
  ScheduleChoice choice;
  choice.order.resize(schedule.layers.size());
  std::iota(choice.order.begin(), choice.order.end(), 0);
  OrderSearch search(schedule, max_evaluations);
  const OrderScore prototxt_score = search.Evaluate(choice.order);
  choice.prototxt_bound = choice.bound = prototxt_score.bound;
  choice.prototxt_planned = choice.planned = PlannedBytes(schedule, choice.order);
  choice.order_free_bound = OrderFreeBound(schedule, search.constraints());
  choice.evaluations = search.evaluations();
  // No order has a lower bound: what the plan adds over it is placement.
  if (choice.prototxt_bound <= choice.order_free_bound) return choice;

  std::vector<int> order = choice.order;
  OrderScore score = prototxt_score;
  search.Improve(&order, &score);
  choice.evaluations = search.evaluations();
  if (score.bound > prototxt_score.bound) return choice;
  const size_t planned = PlannedBytes(schedule, order);
  if (planned > choice.planned || (planned == choice.planned && score.bound >= choice.bound)) {
    return choice;
  }
  choice.order = std::move(order);
  choice.bound = score.bound;
  choice.planned = planned;
  for (size_t step = 0; step < choice.order.size(); ++step) {
    if (choice.order[step] != static_cast<int>(step)) ++choice.moved_layers;
  }
  return choice;
}

}  // namespace demi
