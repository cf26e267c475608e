#include "demi/memory/timeline.hpp"

#include "demi/common.hpp"
#include "demi/util/checked_math.hpp"

namespace demi {

MemoryTimeline DescribeTimeline(const NetSchedule& net_schedule, const Replays& replays,
                                const NetLiveness& liveness, const Plan& plan) {
  const Schedule& schedule = net_schedule.schedule;
  MemoryTimeline timeline;
  for (const ScheduledLayer& layer : schedule.layers) {
    timeline.steps.push_back(layer.name);
    timeline.kinds.push_back(MemoryTimeline::kForward);
  }
  timeline.forward_steps = static_cast<int>(schedule.layers.size());
  if (schedule.backward) {
    // As LivenessProblem orders them: per layer in reverse, its replays first.
    for (int i = static_cast<int>(schedule.layers.size()) - 1; i >= 0; --i) {
      if (!replays.empty()) {
        for (int replayed : replays[i]) {
          timeline.steps.push_back(schedule.layers[replayed].name);
          timeline.kinds.push_back(MemoryTimeline::kRecompute);
        }
      }
      timeline.steps.push_back(schedule.layers[i].name);
      timeline.kinds.push_back(MemoryTimeline::kBackward);
    }
  }
  DEMI_CHECK(static_cast<int>(timeline.steps.size()) == liveness.num_steps,
             "memory timeline of net '", net_schedule.net_name, "': ", timeline.steps.size(),
             " steps named, but the plan has ", liveness.num_steps,
             " (a bug of ours: please report it)");
  const std::vector<TensorRequest>& tensors = liveness.problem.tensors;
  for (size_t t = 0; t < tensors.size(); ++t) {
    TimelineTensor tensor;
    tensor.request = tensors[t];
    tensor.offset = plan.offsets[t];
    if (t < liveness.memories.size()) tensor.memory = liveness.memories[t];
    timeline.tensors.push_back(tensor);
  }
  timeline.live_bytes = LiveBytesPerStep(liveness.problem, liveness.num_steps);
  timeline.arena_bytes = plan.arena_bytes;
  return timeline;
}

std::vector<size_t> LiveBytesPerStep(const Problem& problem, int num_steps) {
  std::vector<size_t> live(static_cast<size_t>(std::max(num_steps, 1)), 0);
  for (const TensorRequest& tensor : problem.tensors) {
    for (int step = tensor.first_step; step <= tensor.last_step; ++step) {
      if (!tensor.LiveAt(step)) continue;
      live[step] = CheckedAdd(live[step], AlignedBytes(tensor.bytes), [&] {
        return StrCat("the live bytes at step ", step, " with tensor '", tensor.name, "'");
      });
    }
  }
  return live;
}

}  // namespace demi
