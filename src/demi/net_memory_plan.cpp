// Net's memory planning: the execution order, the schedule's liveness, the
// recomputation a memory_budget asks for, and binding the planned tensors to the arena.
#include <numeric>
#include <string>

#include "demi/memory/schedule_order.hpp"
#include "demi/net.hpp"
#include "demi/net_schedule.hpp"

namespace demi {

void Net::PlanMemory() {
  NetSchedule schedule = DescribeSchedule(*this, phase_ == TRAIN, keep_blobs_);
  std::vector<size_t> sizes;
  for (const ScheduledMemory& memory : schedule.schedule.memories) sizes.push_back(memory.bytes);
  sizes.push_back(schedule.schedule.scratch_bytes);
  if (!planned_sizes_.empty() && sizes == planned_sizes_) return;
  const PlanStrategy strategy = strategy_ == NONE    ? PlanStrategy::kNone
                                : strategy_ == SLOTS ? PlanStrategy::kSlots
                                                     : PlanStrategy::kArena;
  const Schedule prototxt_order = schedule.schedule;
  ChooseExecutionOrder(prototxt_order, strategy);
  // From here on the schedule's steps are the execution order's.
  schedule.schedule = Reordered(prototxt_order, execution_order_);
  recomputation_ = Recomputation();
  if (memory_budget_ > 0 && phase_ == TRAIN) {
    recomputation_ = ChooseRecomputation(schedule.schedule, memory_budget_);
    // The order was chosen without replays: where prototxt order's
    // recomputation reaches a smaller arena than the chosen one's (when
    // that one misses the budget), run in prototxt order.
    if (schedule_choice_.changed() && !recomputation_.fits) {
      Recomputation in_prototxt_order = ChooseRecomputation(prototxt_order, memory_budget_);
      if (in_prototxt_order.plan.arena_bytes < recomputation_.plan.arena_bytes) {
        LOG(INFO) << "Schedule for net '" << name_
                  << "': prototxt order, whose recomputation reaches a smaller arena";
        std::iota(execution_order_.begin(), execution_order_.end(), 0);
        schedule_choice_.order = execution_order_;
        schedule_choice_.moved_layers = 0;
        schedule_choice_.bound = schedule_choice_.prototxt_bound;
        schedule_choice_.planned = schedule_choice_.prototxt_planned;
        schedule.schedule = prototxt_order;
        recomputation_ = std::move(in_prototxt_order);
      }
    }
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

void Net::ChooseExecutionOrder(const Schedule& schedule, PlanStrategy strategy) {
  execution_order_.resize(layers_.size());
  std::iota(execution_order_.begin(), execution_order_.end(), 0);
  schedule_choice_ = ScheduleChoice();
  if (strategy != PlanStrategy::kArena || schedule_order_ == PROTOTXT) return;
  schedule_choice_ = ChooseOrder(schedule);
  execution_order_ = schedule_choice_.order;
  if (!schedule_choice_.changed()) return;
  const ScheduleChoice& c = schedule_choice_;
  const double mib = 1024.0 * 1024.0;
  LOG(INFO) << "Schedule for net '" << name_ << "': " << c.moved_layers
            << " layers run at other steps than in prototxt order (same results), lowering the "
               "bound from "
            << c.prototxt_bound / mib << " to " << c.bound / mib << " MiB and the plan from "
            << c.prototxt_planned / mib << " to " << c.planned / mib << " MiB (saves "
            << (c.prototxt_planned - c.planned) / mib << " MiB)";
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
