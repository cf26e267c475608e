// Liveness, planner side: a NetSchedule written by hand (no Net) turned into
// the planner's problem — which memories stay out of the arena, the scratch
// region, layers without backward — and the plan it gives.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "demi/memory/liveness.hpp"
#include "demi/memory/planner.hpp"

namespace demi {
namespace {

/// input -> A -> a -> B -> b, where B runs backward and A does not (its
/// bottom needs no gradient). B saves a buffer "B/mask" for its backward
/// and reads "b diff"; "stale" is read by A before anything writes it.
struct TwoLayers {
  std::vector<std::unique_ptr<SyncedMemory>> owned;
  NetSchedule net;

  TwoLayers() {
    net.net_name = "two";
    const std::vector<ScheduledMemory> memories = {
        {"input", 256, true}, {"a", 1024},      {"b", 512, true}, {"B/mask", 2048, false, true},
        {"b diff", 512},      {"a diff", 1024}, {"stale", 128}};
    for (const ScheduledMemory& memory : memories) {
      owned.push_back(std::make_unique<SyncedMemory>(memory.bytes));
      net.memories.push_back(owned.back().get());
    }
    net.schedule.memories = memories;
    net.schedule.backward = true;
    ScheduledLayer a;
    a.name = "A";
    a.forward_reads = {0, 6};
    a.forward_writes = {1};
    ScheduledLayer b;
    b.name = "B";
    b.forward_reads = {1};
    b.forward_writes = {2};
    b.runs_backward = true;
    b.saved = {3};
    b.backward_reads = {4, 1};
    b.backward_writes = {5};
    net.schedule.layers = {a, b};
  }
};

TEST(LivenessTest, PersistentAndUnwrittenMemoriesStayOutOfThePlan) {
  TwoLayers two;
  const NetLiveness liveness = AnalyzeLiveness(two.net);
  // Steps: A forward (0), B forward (1), B backward (2), A backward (3: A
  // does not run backward, so it uses nothing there).
  EXPECT_EQ(liveness.num_steps, 4);
  // input, b (persistent), "b diff" (read by B's backward before anything
  // writes it: it keeps its contents) and stale.
  ASSERT_EQ(liveness.persistent_memories.size(), 4u);
  EXPECT_EQ(liveness.persistent_memories[0], two.owned[0].get());
  EXPECT_EQ(liveness.persistent_memories[3], two.owned[6].get());
  EXPECT_EQ(liveness.persistent_bytes, 256u + 512u + 512u + 128u);
  // Planned: a over [0, 2], B/mask over [1, 2], a diff at [2, 2].
  ASSERT_EQ(liveness.problem.tensors.size(), 3u);
  EXPECT_EQ(liveness.memories, (std::vector<SyncedMemory*>{two.owned[1].get(), two.owned[3].get(),
                                                           two.owned[5].get()}));
  const TensorRequest& a = liveness.problem.tensors[0];
  EXPECT_EQ(a.first_step, 0);
  EXPECT_EQ(a.last_step, 2);
  const TensorRequest& mask = liveness.problem.tensors[1];
  EXPECT_EQ(mask.first_step, 1);
  EXPECT_EQ(mask.last_step, 2);
  // All three are live at step 2: the plan cannot overlap them.
  const Plan plan = SolvePlan(liveness.problem, PlanStrategy::kArena);
  EXPECT_EQ(CheckPlan(liveness.problem, plan), "");
  EXPECT_EQ(plan.lower_bound_bytes, AlignedBytes(1024) + AlignedBytes(2048) + AlignedBytes(1024));
}

TEST(LivenessTest, WithoutBackwardSavedBuffersAreNotWrittenAndGradientsUnused) {
  TwoLayers two;
  two.net.schedule.backward = false;
  two.net.schedule.layers[1].runs_backward = false;
  const NetLiveness liveness = AnalyzeLiveness(two.net);
  EXPECT_EQ(liveness.num_steps, 2);
  // Only "a" is planned; the mask and both gradients are never used.
  ASSERT_EQ(liveness.problem.tensors.size(), 1u);
  EXPECT_EQ(liveness.problem.tensors[0].name, "a");
  EXPECT_EQ(liveness.problem.tensors[0].last_step, 1);
  EXPECT_EQ(liveness.persistent_bytes, 256u + 512u + 128u);
}

TEST(LivenessTest, ScratchIsOneRegionLiveThroughoutAtTheEnd) {
  TwoLayers two;
  SyncedMemory first(300), second(200);
  two.net.scratch_memories = {&first, &second};
  two.net.scratch_offsets = {0, AlignedBytes(300)};
  two.net.schedule.has_scratch = true;
  two.net.schedule.scratch_bytes = AlignedBytes(300) + AlignedBytes(200);
  const NetLiveness liveness = AnalyzeLiveness(two.net);
  const TensorRequest& scratch = liveness.problem.tensors.back();
  EXPECT_EQ(scratch.name, "scratch");
  EXPECT_EQ(scratch.bytes, two.net.schedule.scratch_bytes);
  EXPECT_EQ(scratch.first_step, 0);
  EXPECT_EQ(scratch.last_step, liveness.num_steps - 1);
  EXPECT_EQ(liveness.scratch_bytes, two.net.schedule.scratch_bytes);
  EXPECT_EQ(liveness.scratch_memories.size(), 2u);
  // memories stays parallel to the tensors before the scratch region.
  EXPECT_EQ(liveness.memories.size() + 1, liveness.problem.tensors.size());
}

}  // namespace
}  // namespace demi
