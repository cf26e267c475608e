#include "demi/memory/liveness.hpp"

#include "demi/util/checked_math.hpp"

namespace demi {

NetLiveness AnalyzeLiveness(const NetSchedule& net_schedule, const Replays& replays) {
  const ScheduleProblem scheduled = LivenessProblem(net_schedule.schedule, replays);
  NetLiveness result;
  result.problem = scheduled.problem;
  result.num_steps = scheduled.num_steps;
  for (int memory : scheduled.memory_of_tensor) {
    if (memory >= 0) result.memories.push_back(net_schedule.memories[memory]);
  }
  for (int memory : scheduled.persistent_memories) {
    const ScheduledMemory& described = net_schedule.schedule.memories[memory];
    result.persistent_bytes = CheckedAdd(result.persistent_bytes, described.bytes, [&] {
      return StrCat("net '", net_schedule.net_name, "': the persistent bytes with '",
                    described.name, "'");
    });
    result.persistent_memories.push_back(net_schedule.memories[memory]);
  }
  result.scratch_memories = net_schedule.scratch_memories;
  result.scratch_offsets = net_schedule.scratch_offsets;
  result.scratch_bytes = net_schedule.schedule.scratch_bytes;
  return result;
}

}  // namespace demi
