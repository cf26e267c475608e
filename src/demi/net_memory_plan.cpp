// Net's memory planning: the schedule's liveness, the recomputation a
// memory_budget asks for, and binding the planned tensors to the arena.
#include <string>

#include "demi/memory/liveness.hpp"
#include "demi/net.hpp"

namespace demi {

void Net::PlanMemory() {
  const NetSchedule schedule = DescribeSchedule(*this, phase_ == TRAIN, keep_blobs_);
  std::vector<size_t> sizes;
  for (const ScheduledMemory& memory : schedule.schedule.memories) sizes.push_back(memory.bytes);
  sizes.push_back(schedule.schedule.scratch_bytes);
  if (!planned_sizes_.empty() && sizes == planned_sizes_) return;
  const PlanStrategy strategy = strategy_ == NONE    ? PlanStrategy::kNone
                                : strategy_ == SLOTS ? PlanStrategy::kSlots
                                                     : PlanStrategy::kArena;
  recomputation_ = Recomputation();
  if (memory_budget_ > 0 && phase_ == TRAIN) {
    recomputation_ = ChooseRecomputation(schedule.schedule, memory_budget_);
    const double mib = 1024.0 * 1024.0;
    DEMI_CHECK(recomputation_.fits, "net '", name_, "': memory_budget of ", memory_budget_ / mib,
               " MiB cannot be met: recomputing ", recomputation_.dropped.size(),
               " activations brings its planned bytes down to ",
               recomputation_.plan.arena_bytes / mib, " MiB at the least (",
               recomputation_.unplanned_arena_bytes / mib, " MiB without recomputation)");
    LogRecomputation(schedule.schedule);
  }
  const NetLiveness liveness = AnalyzeLiveness(schedule, recomputation_.replays);
  plan_ = SolvePlan(liveness.problem, strategy);
  persistent_bytes_ = liveness.persistent_bytes;
  const double mib = 1024.0 * 1024.0;
  LOG(INFO) << "Memory plan (" << PlanStrategyName(strategy) << ") for net '" << name_ << "' ("
            << (phase_ == TRAIN ? "TRAIN" : "TEST") << "): naive " << plan_.naive_bytes / mib
            << " MiB, planned " << plan_.arena_bytes / mib << " MiB, lower bound "
            << plan_.lower_bound_bytes / mib << " MiB, persistent " << persistent_bytes_ / mib
            << " MiB";
  if (strategy != PlanStrategy::kNone) {  // NONE: every tensor keeps its own memory
    CheckPlanFits(liveness);
    BindToArena(liveness);
  }
  planned_sizes_ = sizes;  // only once the plan is in place
}

void Net::LogRecomputation(const Schedule& schedule) const {
  const Recomputation& r = recomputation_;
  const double mib = 1024.0 * 1024.0;
  if (r.dropped.empty()) {
    LOG(INFO) << "Recomputation for net '" << name_ << "': none needed, "
              << r.unplanned_arena_bytes / mib << " MiB planned within the memory_budget of "
              << memory_budget_ / mib << " MiB";
    return;
  }
  std::string names;
  for (size_t i = 0; i < r.dropped.size(); ++i) {
    if (i == 8) {
      names += StrCat(", and ", r.dropped.size() - i, " more");
      break;
    }
    names += (i ? ", " : "") + schedule.memories[r.dropped[i]].name;
  }
  LOG(INFO) << "Recomputation for net '" << name_ << "' under a memory_budget of "
            << memory_budget_ / mib << " MiB: drops " << r.dropped.size() << " activations ("
            << names << ") after forward and recomputes them during backward with "
            << r.replayed_layers << " layer forwards, " << r.extra_flops / 1e9
            << " GFLOP more per iteration ("
            << (r.forward_flops > 0 ? 100.0 * r.extra_flops / r.forward_flops : 0.0)
            << " % of a forward pass); planned " << r.plan.arena_bytes / mib
            << " MiB (without: " << r.unplanned_arena_bytes / mib << " MiB)";
}

void Net::BindToArena(const NetLiveness& liveness) {
  arena_->Reserve(plan_.arena_bytes);
  for (size_t i = 0; i < liveness.memories.size(); ++i) {
    liveness.memories[i]->BindToArena(arena_.get(), plan_.offsets[i],
                                      liveness.problem.tensors[i].bytes);
  }
  if (!liveness.scratch_memories.empty()) {
    const size_t region = plan_.offsets.back();
    for (size_t i = 0; i < liveness.scratch_memories.size(); ++i) {
      SyncedMemory* memory = liveness.scratch_memories[i];
      memory->BindToArena(arena_.get(), region + liveness.scratch_offsets[i], memory->size());
    }
  }
}

}  // namespace demi
