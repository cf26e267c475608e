#include "demi/memory/recompute.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

#include "demi/common.hpp"

namespace demi {

namespace {

/// For each memory, the layers whose forward writes it, in forward order.
std::vector<std::vector<int>> WritersOf(const Schedule& schedule) {
  std::vector<std::vector<int>> writers(schedule.memories.size());
  for (size_t i = 0; i < schedule.layers.size(); ++i) {
    for (int m : schedule.layers[i].forward_writes) {
      if (writers[m].empty() || writers[m].back() != static_cast<int>(i)) {
        writers[m].push_back(static_cast<int>(i));
      }
    }
  }
  return writers;
}

/// CanDrop with the writers of every memory already known.
bool CanDrop(const Schedule& schedule, const std::vector<std::vector<int>>& writers, int m) {
  const ScheduledMemory& memory = schedule.memories[m];
  if (memory.persistent || memory.saved_buffer) return false;
  if (writers[m].empty()) return false;
  for (int layer : writers[m]) {
    const ScheduledLayer& scheduled = schedule.layers[layer];
    if (!scheduled.replayable) return false;
    // A replay reads its other bottoms as they are at the end of forward:
    // they must not change after this layer read them.
    for (int bottom : scheduled.forward_reads) {
      if (bottom == m || writers[bottom].empty()) continue;
      if (writers[bottom].back() > layer) return false;
    }
  }
  return true;
}

}  // namespace

bool CanDrop(const Schedule& schedule, int m) { return CanDrop(schedule, WritersOf(schedule), m); }

Replays ReplaysFor(const Schedule& schedule, const std::vector<bool>& dropped) {
  const int num_layers = static_cast<int>(schedule.layers.size());
  const auto writers = WritersOf(schedule);
  Replays replays(schedule.layers.size());
  std::vector<bool> available(schedule.memories.size(), false);
  std::vector<bool> replayed(schedule.layers.size(), false);
  // Recomputes memory m into `out`: first the dropped memories its writers
  // read, then its writers, then the other dropped tops they wrote.
  std::function<void(int, std::vector<int>*)> recompute = [&](int m, std::vector<int>* out) {
    if (available[m]) return;
    available[m] = true;
    for (int layer : writers[m]) {
      for (int bottom : schedule.layers[layer].forward_reads) {
        if (bottom != m && dropped[bottom]) recompute(bottom, out);
      }
    }
    for (int layer : writers[m]) {
      if (replayed[layer]) continue;
      replayed[layer] = true;
      out->push_back(layer);
    }
    for (int layer : writers[m]) {
      for (int top : schedule.layers[layer].forward_writes) {
        if (top != m && dropped[top]) recompute(top, out);
      }
    }
  };
  for (int i = num_layers - 1; i >= 0; --i) {
    const ScheduledLayer& layer = schedule.layers[i];
    if (!layer.runs_backward) continue;
    for (const auto* needed : {&layer.forward_writes, &layer.backward_reads}) {
      for (int m : *needed) {
        if (dropped[m]) recompute(m, &replays[i]);
      }
    }
  }
  return replays;
}

Recomputation ChooseRecomputation(const Schedule& schedule, size_t budget) {
  Recomputation result;
  for (const ScheduledLayer& layer : schedule.layers) result.forward_flops += layer.forward_flops;
  const ScheduleProblem base = LivenessProblem(schedule);
  result.plan = SolvePlan(base.problem, PlanStrategy::kArena);
  result.unplanned_arena_bytes = result.plan.arena_bytes;
  result.fits = result.plan.arena_bytes <= budget;
  if (result.fits || !schedule.backward) return result;

  // Candidates, cheapest first: FLOPs to recompute per byte dropped.
  const auto writers = WritersOf(schedule);
  std::vector<int> candidates;
  std::vector<double> cost(schedule.memories.size(), 0);
  for (int m = 0; m < static_cast<int>(schedule.memories.size()); ++m) {
    if (!CanDrop(schedule, writers, m) || schedule.memories[m].bytes == 0) continue;
    for (int layer : writers[m]) cost[m] += schedule.layers[layer].forward_flops;
    cost[m] /= static_cast<double>(schedule.memories[m].bytes);
    candidates.push_back(m);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    if (cost[a] != cost[b]) return cost[a] < cost[b];
    return schedule.memories[a].bytes > schedule.memories[b].bytes;
  });

  std::vector<bool> dropped(schedule.memories.size(), false);
  size_t bound = LowerBoundBytes(base.problem);
  double held = HeldByteSteps(base.problem);
  bool fits = false;
  // A drop that does not help alone may help once others are made: a few
  // passes over the candidates, until one changes nothing.
  for (int pass = 0; pass < 3 && !fits; ++pass) {
    bool changed = false;
    for (int m : candidates) {
      if (dropped[m]) continue;
      dropped[m] = true;
      const ScheduleProblem trial = LivenessProblem(schedule, ReplaysFor(schedule, dropped));
      const size_t trial_bound = LowerBoundBytes(trial.problem);
      const double trial_held = HeldByteSteps(trial.problem);
      if (trial_bound > bound || (trial_bound == bound && trial_held >= held)) {
        dropped[m] = false;
        continue;
      }
      bound = trial_bound;
      held = trial_held;
      changed = true;
      result.dropped.push_back(m);
      if (bound <= budget) {
        result.plan = SolvePlan(trial.problem, PlanStrategy::kArena);
        if (result.plan.arena_bytes <= budget) {
          fits = true;
          break;
        }
      }
    }
    if (!changed) break;
  }
  result.replays = ReplaysFor(schedule, dropped);
  if (!fits)
    result.plan =
        SolvePlan(LivenessProblem(schedule, result.replays).problem, PlanStrategy::kArena);
  for (const std::vector<int>& replays : result.replays) {
    for (int layer : replays) {
      ++result.replayed_layers;
      result.extra_flops += schedule.layers[layer].forward_flops;
    }
  }
  result.fits = result.plan.arena_bytes <= budget;
  return result;
}

}  // namespace demi
