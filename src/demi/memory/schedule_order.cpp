#include "demi/memory/schedule_order.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include "demi/common.hpp"
#include "demi/memory/planner.hpp"

namespace demi {

namespace {

/// Walks one pass's accesses in prototxt order and adds an edge for every
/// read-after-write, write-after-read and write-after-write on a memory.
class HazardRecorder {
 public:
  HazardRecorder(size_t num_memories, OrderConstraints* out)
      : last_writer_(num_memories, -1), readers_(num_memories), out_(out) {}

  void Access(int layer, const std::vector<int>& reads, const std::vector<int>& writes) {
    for (int memory : reads) {
      if (std::find(writes.begin(), writes.end(), memory) != writes.end()) continue;
      Edge(last_writer_[memory], layer);
      readers_[memory].push_back(layer);
    }
    for (int memory : writes) {
      Edge(last_writer_[memory], layer);
      for (int reader : readers_[memory]) Edge(reader, layer);
      readers_[memory].clear();
      last_writer_[memory] = layer;
    }
  }

  void Edge(int before, int after) {
    if (before < 0 || before == after) return;
    auto& successors = out_->successors[before];
    if (std::find(successors.begin(), successors.end(), after) != successors.end()) return;
    successors.push_back(after);
    out_->predecessors[after].push_back(before);
  }

 private:
  std::vector<int> last_writer_;
  std::vector<std::vector<int>> readers_;
  OrderConstraints* out_;
};

/// A set of steps: layer i's forward step is i, its backward step n + i.
class StepSet {
 public:
  explicit StepSet(size_t num_steps) : words_((num_steps + 63) / 64, 0) {}
  void Add(size_t step) { words_[step / 64] |= uint64_t{1} << (step % 64); }
  bool Has(size_t step) const { return (words_[step / 64] >> (step % 64)) & 1; }
  void AddAll(const StepSet& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }
  void KeepOnly(const StepSet& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] &= other.words_[w];
  }

 private:
  std::vector<uint64_t> words_;
};

}  // namespace

OrderConstraints ConstrainOrder(const Schedule& schedule) {
  const int num_layers = static_cast<int>(schedule.layers.size());
  OrderConstraints result;
  result.predecessors.resize(num_layers);
  result.successors.resize(num_layers);
  HazardRecorder forward(schedule.memories.size(), &result);
  HazardRecorder backward(schedule.memories.size(), &result);
  std::map<int, int> last_of_group;
  for (int i = 0; i < num_layers; ++i) {
    const ScheduledLayer& layer = schedule.layers[i];
    std::vector<int> forward_writes = layer.forward_writes;
    if (layer.runs_backward) {
      forward_writes.insert(forward_writes.end(), layer.saved.begin(), layer.saved.end());
    }
    forward.Access(i, layer.forward_reads, forward_writes);
    if (layer.runs_backward) {
      std::vector<int> backward_reads = layer.saved;
      backward_reads.insert(backward_reads.end(), layer.backward_reads.begin(),
                            layer.backward_reads.end());
      backward.Access(i, backward_reads, layer.backward_writes);
    }
    for (int group : layer.order_groups) {
      auto [it, first] = last_of_group.try_emplace(group, i);
      if (!first) {
        forward.Edge(it->second, i);
        it->second = i;
      }
    }
  }
  while (result.pinned_prefix < num_layers &&
         schedule.layers[result.pinned_prefix].forward_reads.empty()) {
    ++result.pinned_prefix;
  }
  for (int pinned = 0; pinned < result.pinned_prefix; ++pinned) {
    if (pinned + 1 < result.pinned_prefix) forward.Edge(pinned, pinned + 1);
  }
  if (result.pinned_prefix > 0) {
    for (int i = result.pinned_prefix; i < num_layers; ++i) {
      forward.Edge(result.pinned_prefix - 1, i);
    }
  }
  return result;
}

std::string CheckOrder(const OrderConstraints& constraints, const std::vector<int>& order) {
  const size_t num_layers = constraints.predecessors.size();
  if (order.size() != num_layers) {
    return StrCat("an order of ", order.size(), " layers for a schedule of ", num_layers);
  }
  std::vector<int> position(num_layers, -1);
  for (size_t p = 0; p < order.size(); ++p) {
    if (order[p] < 0 || order[p] >= static_cast<int>(num_layers) || position[order[p]] >= 0) {
      return StrCat("step ", p, " runs layer ", order[p], ", which is not a layer or runs twice");
    }
    position[order[p]] = static_cast<int>(p);
  }
  for (size_t layer = 0; layer < num_layers; ++layer) {
    for (int before : constraints.predecessors[layer]) {
      if (position[before] > position[layer]) {
        return StrCat("layer ", layer, " runs at step ", position[layer], " before layer ", before,
                      " (step ", position[before], "), which it must follow");
      }
    }
  }
  return "";
}

Schedule Reordered(const Schedule& schedule, const std::vector<int>& order) {
  DEMI_CHECK(order.size() == schedule.layers.size(), "an order of ", order.size(),
             " layers for a schedule of ", schedule.layers.size());
  Schedule result;
  result.memories = schedule.memories;
  result.backward = schedule.backward;
  result.has_scratch = schedule.has_scratch;
  result.scratch_bytes = schedule.scratch_bytes;
  result.layers.reserve(order.size());
  for (int layer : order) result.layers.push_back(schedule.layers[layer]);
  return result;
}

size_t OrderFreeBound(const Schedule& schedule, const OrderConstraints& constraints) {
  const size_t n = schedule.layers.size();
  const size_t num_steps = schedule.backward ? 2 * n : n;
  // Ancestors and descendants of each layer; edges go from lower to higher
  // prototxt index, so one sweep each way closes them.
  std::vector<StepSet> ancestors(n, StepSet(n)), descendants(n, StepSet(n));
  for (size_t layer = 0; layer < n; ++layer) {
    for (int before : constraints.predecessors[layer]) {
      ancestors[layer].Add(before);
      ancestors[layer].AddAll(ancestors[before]);
    }
  }
  for (size_t layer = n; layer-- > 0;) {
    for (int after : constraints.successors[layer]) {
      descendants[layer].Add(after);
      descendants[layer].AddAll(descendants[after]);
    }
  }
  // Steps that come before (after) a step in every allowed order.
  std::vector<StepSet> before(num_steps, StepSet(num_steps)), after(num_steps, StepSet(num_steps));
  for (size_t layer = 0; layer < n; ++layer) {
    for (size_t other = 0; other < n; ++other) {
      if (ancestors[layer].Has(other)) {
        before[layer].Add(other);
        if (schedule.backward) after[n + layer].Add(n + other);
      }
      if (descendants[layer].Has(other)) {
        after[layer].Add(other);
        if (schedule.backward) before[n + layer].Add(n + other);
      }
      if (schedule.backward) {
        after[layer].Add(n + other);
        before[n + layer].Add(other);
      }
    }
  }
  // The steps using each memory, as LivenessProblem records them.
  std::vector<std::vector<size_t>> uses(schedule.memories.size());
  for (size_t layer = 0; layer < n; ++layer) {
    const ScheduledLayer& scheduled = schedule.layers[layer];
    for (const auto* memories : {&scheduled.forward_reads, &scheduled.forward_writes}) {
      for (int m : *memories) uses[m].push_back(layer);
    }
    if (!scheduled.runs_backward) continue;
    for (int m : scheduled.saved) uses[m].push_back(layer);
    if (!schedule.backward) continue;
    for (const auto* memories :
         {&scheduled.saved, &scheduled.backward_reads, &scheduled.backward_writes}) {
      for (int m : *memories) uses[m].push_back(n + layer);
    }
  }
  const ScheduleProblem planned = LivenessProblem(schedule);
  std::vector<size_t> live(num_steps, 0);
  for (int m : planned.memory_of_tensor) {
    if (m < 0) continue;
    StepSet surely_live(num_steps), some_use_before(num_steps), some_use_after(num_steps);
    for (size_t step : uses[m]) {
      surely_live.Add(step);
      some_use_before.AddAll(after[step]);
      some_use_after.AddAll(before[step]);
    }
    some_use_before.KeepOnly(some_use_after);
    surely_live.AddAll(some_use_before);
    const size_t bytes = AlignedBytes(schedule.memories[m].bytes);
    for (size_t step = 0; step < num_steps; ++step) {
      if (surely_live.Has(step)) live[step] += bytes;
    }
  }
  const size_t scratch = schedule.has_scratch ? AlignedBytes(schedule.scratch_bytes) : 0;
  return (live.empty() ? 0 : *std::max_element(live.begin(), live.end())) + scratch;
}

}  // namespace demi
