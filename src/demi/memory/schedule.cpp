#include "demi/memory/schedule.hpp"

#include <algorithm>
#include <climits>

#include "demi/common.hpp"

namespace demi {

namespace {

/// The uses of one memory over a schedule.
struct MemoryUses {
  int first_step = -1;
  int last_step = -1;
  bool first_use_writes = false;
  int last_forward_step = -1;    ///< its last use in the forward pass
  int first_backward_step = -1;  ///< its first use after the forward pass
  bool rewritten_first = false;  ///< that use is a replay writing it
};

class UseRecorder {
 public:
  UseRecorder(size_t num_memories, int num_forward_steps)
      : uses_(num_memories), num_forward_steps_(num_forward_steps) {}

  void Use(int memory, int step, bool writes, bool replay = false) {
    MemoryUses& uses = uses_[memory];
    if (uses.first_step < 0 || step < uses.first_step) {
      uses.first_step = step;
      uses.first_use_writes = writes;
    } else if (step == uses.first_step) {
      uses.first_use_writes = uses.first_use_writes || writes;
    }
    uses.last_step = std::max(uses.last_step, step);
    if (step < num_forward_steps_) {
      uses.last_forward_step = std::max(uses.last_forward_step, step);
    } else if (uses.first_backward_step < 0 || step < uses.first_backward_step) {
      uses.first_backward_step = step;
      uses.rewritten_first = replay && writes;
    } else if (step == uses.first_backward_step) {
      uses.rewritten_first = uses.rewritten_first || (replay && writes);
    }
  }
  const MemoryUses& uses(int memory) const { return uses_[memory]; }

 private:
  std::vector<MemoryUses> uses_;
  int num_forward_steps_;
};

/// A forward step, or a replay of it during backward.
void RecordForward(const ScheduledLayer& layer, int step, bool replay, UseRecorder* recorder) {
  for (int memory : layer.forward_reads) recorder->Use(memory, step, false, replay);
  for (int memory : layer.forward_writes) recorder->Use(memory, step, true, replay);
  if (!layer.runs_backward) return;  // its saved buffers are not written
  const bool writes_saved = !(replay && layer.replay_reads_saved);
  for (int memory : layer.saved) recorder->Use(memory, step, writes_saved, replay);
}

void RecordBackward(const ScheduledLayer& layer, int step, UseRecorder* recorder) {
  if (!layer.runs_backward) return;
  for (int memory : layer.saved) recorder->Use(memory, step, false);
  for (int memory : layer.backward_reads) recorder->Use(memory, step, false);
  for (int memory : layer.backward_writes) recorder->Use(memory, step, true);
}

}  // namespace

ScheduleProblem LivenessProblem(const Schedule& schedule, const Replays& replays) {
  const int num_layers = static_cast<int>(schedule.layers.size());
  DEMI_CHECK(replays.empty() || replays.size() == schedule.layers.size(), "replays for ",
             replays.size(), " layers of a schedule of ", num_layers);
  UseRecorder recorder(schedule.memories.size(), num_layers);
  int step = 0;
  for (; step < num_layers; ++step) RecordForward(schedule.layers[step], step, false, &recorder);
  if (schedule.backward) {
    for (int i = num_layers - 1; i >= 0; --i) {
      if (!replays.empty()) {
        for (int replayed : replays[i]) {
          RecordForward(schedule.layers[replayed], step++, true, &recorder);
        }
      }
      RecordBackward(schedule.layers[i], step++, &recorder);
    }
  }

  ScheduleProblem result;
  result.num_steps = step;
  for (size_t m = 0; m < schedule.memories.size(); ++m) {
    const ScheduledMemory& memory = schedule.memories[m];
    const MemoryUses& uses = recorder.uses(static_cast<int>(m));
    if (uses.first_step < 0 && !memory.persistent) continue;  // never used
    if (memory.persistent || !uses.first_use_writes) {
      result.persistent_memories.push_back(static_cast<int>(m));
      continue;
    }
    TensorRequest tensor{memory.name, memory.bytes, uses.first_step, uses.last_step};
    // Dead from its last forward use until a replay writes it again.
    if (uses.rewritten_first && uses.last_forward_step >= 0) {
      tensor.gap_first = uses.last_forward_step + 1;
      tensor.gap_last = uses.first_backward_step - 1;
    }
    result.problem.tensors.push_back(tensor);
    result.memory_of_tensor.push_back(static_cast<int>(m));
  }
  if (schedule.has_scratch) {
    result.problem.tensors.push_back(
        {"scratch", schedule.scratch_bytes, 0, std::max(result.num_steps - 1, 0)});
    result.memory_of_tensor.push_back(-1);
  }
  return result;
}

}  // namespace demi
