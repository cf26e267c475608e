// Recomputation, planner side: tensors with a dead gap, liveness of a
// schedule with replays, what may be dropped and the chooser, on synthetic
// schedules (no Net).
#include <gtest/gtest.h>

#include "demi/common.hpp"
#include "demi/memory/planner.hpp"
#include "demi/memory/recompute.hpp"
#include "demi/memory/schedule.hpp"

namespace demi {
namespace {

TEST(GapTest, ATensorWithAGapSharesItsBytesDuringTheGap) {
  Problem problem;
  // "a" is live over [0, 1] and [6, 7]; "b" over [2, 5], inside a's gap.
  TensorRequest a{"a", 4096, 0, 7};
  a.gap_first = 2;
  a.gap_last = 5;
  problem.tensors = {a, {"b", 4096, 2, 5}};
  EXPECT_FALSE(LiveTogether(problem.tensors[0], problem.tensors[1]));
  EXPECT_EQ(LowerBoundBytes(problem), 4096u);
  Plan plan = SolvePlan(problem, PlanStrategy::kArena);
  EXPECT_EQ(plan.arena_bytes, 4096u);
  EXPECT_EQ(CheckPlan(problem, plan), "");
  // Live at a step of the gap's edge: they may no longer share.
  problem.tensors[1].last_step = 6;
  EXPECT_TRUE(LiveTogether(problem.tensors[0], problem.tensors[1]));
  EXPECT_EQ(LowerBoundBytes(problem), 8192u);
  plan.offsets = {0, 0};
  EXPECT_NE(CheckPlan(problem, plan).find("live together"), std::string::npos);
}

TEST(GapTest, AGapOutsideTheIntervalIsAnError) {
  Problem problem;
  TensorRequest a{"a", 64, 0, 3};
  a.gap_first = 3;
  a.gap_last = 4;
  problem.tensors = {a};
  EXPECT_THROW(SolvePlan(problem, PlanStrategy::kArena), Error);
}

/// A chain input -> L0 -> m1 -> L1 -> m2 -> L2 -> m3 -> loss L3, each layer
/// reading its bottom in backward; memories 0 (input) and 4 (loss) are
/// persistent; gradients are memories 5.. .
Schedule Chain(bool middle_replayable = true) {
  Schedule s;
  s.backward = true;
  s.memories = {{"input", 1024, true}, {"m1", 4096},      {"m2", 8192},      {"m3", 4096},
                {"loss", 64, true},    {"m1 diff", 4096}, {"m2 diff", 8192}, {"m3 diff", 4096}};
  auto layer = [](std::string name, int in, int out, int in_diff, int out_diff) {
    ScheduledLayer l;
    l.name = std::move(name);
    l.forward_reads = {in};
    l.forward_writes = {out};
    l.runs_backward = true;
    l.backward_reads = {out_diff, in};
    if (in_diff >= 0) l.backward_writes = {in_diff};
    l.replayable = true;
    l.forward_flops = 1000;
    return l;
  };
  s.layers = {layer("L0", 0, 1, -1, 5), layer("L1", 1, 2, 5, 6), layer("L2", 2, 3, 6, 7),
              layer("L3", 3, 4, 7, 4)};
  s.layers[1].replayable = middle_replayable;
  s.layers[3].replayable = false;  // a loss
  return s;
}

TEST(ScheduleTest, WithoutReplaysStepsAreForwardThenBackwardInReverse) {
  const ScheduleProblem p = LivenessProblem(Chain());
  EXPECT_EQ(p.num_steps, 8);
  // m1: written at step 0, read by L1 (step 1), by L1's backward (step 6) and L0's (7).
  ASSERT_EQ(p.problem.tensors[0].name, "m1");
  EXPECT_EQ(p.problem.tensors[0].first_step, 0);
  EXPECT_EQ(p.problem.tensors[0].last_step, 6);
  EXPECT_FALSE(p.problem.tensors[0].has_gap());
  EXPECT_EQ(p.persistent_memories, (std::vector<int>{0, 4}));
}

TEST(ScheduleTest, ADroppedMemoryIsRecomputedBeforeTheFirstBackwardThatNeedsIt) {
  const Schedule s = Chain();
  std::vector<bool> dropped(s.memories.size(), false);
  dropped[2] = true;  // m2, written by L1, read by L2's backward
  const Replays replays = ReplaysFor(s, dropped);
  EXPECT_EQ(replays[2], std::vector<int>{1});  // L1 runs again before L2's backward
  EXPECT_TRUE(replays[0].empty() && replays[1].empty() && replays[3].empty());
  const ScheduleProblem p = LivenessProblem(s, replays);
  EXPECT_EQ(p.num_steps, 9);
  const TensorRequest& m2 = p.problem.tensors[1];
  ASSERT_EQ(m2.name, "m2");
  // Forward: written at 1, read at 2; dead until the replay at step 5.
  EXPECT_EQ(m2.first_step, 1);
  EXPECT_TRUE(m2.has_gap());
  EXPECT_EQ(m2.gap_first, 3);
  EXPECT_EQ(m2.gap_last, 4);
  EXPECT_FALSE(m2.LiveAt(3) || m2.LiveAt(4));
  EXPECT_TRUE(m2.LiveAt(5) && m2.LiveAt(6));  // rewritten, then read by L2's backward
}

TEST(ScheduleTest, RecomputingReadsDroppedBottomsFirst) {
  const Schedule s = Chain();
  std::vector<bool> dropped(s.memories.size(), false);
  dropped[2] = dropped[3] = true;  // m2 and m3: L2's replay needs m2 again
  const Replays replays = ReplaysFor(s, dropped);
  EXPECT_EQ(replays[3], (std::vector<int>{1, 2}));  // before the loss's backward
  EXPECT_TRUE(replays[2].empty());                  // m2 is still there
}

TEST(ScheduleTest, OnlyActivationsOfReplayableLayersReadingFinalValuesMayDrop) {
  Schedule s = Chain(/*middle_replayable=*/false);
  EXPECT_FALSE(CanDrop(s, 0));  // persistent input
  EXPECT_TRUE(CanDrop(s, 1));
  EXPECT_FALSE(CanDrop(s, 2));  // L1 cannot run again
  EXPECT_FALSE(CanDrop(s, 4));  // the loss
  // L2 reads m2 before an in-place layer L2b rewrites it: a replay of L2
  // would read the later value.
  s = Chain();
  ScheduledLayer in_place = s.layers[1];
  in_place.name = "L1b";
  in_place.forward_reads = {2};
  in_place.forward_writes = {2};
  s.layers.push_back(in_place);
  EXPECT_FALSE(CanDrop(s, 3));
  s.memories[1].saved_buffer = true;
  EXPECT_FALSE(CanDrop(s, 1));
}

TEST(RecomputeTest, AmpleBudgetDropsNothingAndTightOnesDropMore) {
  const Schedule s = Chain();
  const Plan stored = SolvePlan(LivenessProblem(s).problem, PlanStrategy::kArena);
  const Recomputation ample = ChooseRecomputation(s, stored.arena_bytes);
  EXPECT_TRUE(ample.fits);
  EXPECT_TRUE(ample.dropped.empty());
  EXPECT_EQ(ample.plan.arena_bytes, stored.arena_bytes);
  EXPECT_EQ(ample.plan.offsets, stored.offsets);

  const Recomputation least = ChooseRecomputation(s, 1);
  EXPECT_FALSE(least.fits);
  EXPECT_FALSE(least.dropped.empty());
  EXPECT_LT(least.plan.arena_bytes, stored.arena_bytes);
  EXPECT_GT(least.extra_flops, 0);
  EXPECT_EQ(least.unplanned_arena_bytes, stored.arena_bytes);

  const Recomputation exact = ChooseRecomputation(s, least.plan.arena_bytes);
  EXPECT_TRUE(exact.fits);
  EXPECT_LE(exact.plan.arena_bytes, least.plan.arena_bytes);
  EXPECT_EQ(CheckPlan(LivenessProblem(s, exact.replays).problem, exact.plan), "");
}

}  // namespace
}  // namespace demi
