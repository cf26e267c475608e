#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "demi/common.hpp"
#include "demi/memory/planner.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

Problem Chain() {
  // a -> b -> c -> d forward, each read only by the next step.
  Problem problem;
  problem.tensors = {{"a", 1000, 0, 1}, {"b", 3000, 1, 2}, {"c", 2000, 2, 3}, {"d", 500, 3, 4}};
  return problem;
}

TEST(PlannerTest, ChainReachesTheLowerBound) {
  Problem problem = Chain();
  // Aligned: 1024, 3008, 2048, 512; peak at step 2 = 3008 + 2048.
  EXPECT_EQ(LowerBoundBytes(problem), 3008u + 2048u);
  Plan none = SolvePlan(problem, PlanStrategy::kNone);
  EXPECT_EQ(none.arena_bytes, 1024u + 3008u + 2048u + 512u);
  EXPECT_EQ(none.naive_bytes, none.arena_bytes);
  Plan arena = SolvePlan(problem, PlanStrategy::kArena);
  EXPECT_EQ(arena.arena_bytes, arena.lower_bound_bytes);
  EXPECT_EQ(CheckPlan(problem, arena), "");
  Plan slots = SolvePlan(problem, PlanStrategy::kSlots);
  EXPECT_EQ(CheckPlan(problem, slots), "");
  EXPECT_LE(arena.arena_bytes, slots.arena_bytes);
}

TEST(PlannerTest, SlotsShareWholeBuffers) {
  Problem problem;
  problem.tensors = {{"big", 4096, 0, 1}, {"small", 64, 2, 3}, {"other", 64, 0, 3}};
  Plan slots = SolvePlan(problem, PlanStrategy::kSlots);
  EXPECT_EQ(slots.offsets[0], slots.offsets[1]);  // small reuses big's buffer
  EXPECT_EQ(slots.arena_bytes, 4096u + 64u);
}

TEST(PlannerTest, CheckerFindsOverlap) {
  Problem problem = Chain();
  Plan plan = SolvePlan(problem, PlanStrategy::kArena);
  plan.offsets[2] = plan.offsets[1];  // b and c are both live at step 2
  EXPECT_NE(CheckPlan(problem, plan).find("live together"), std::string::npos);
  Plan outside = SolvePlan(problem, PlanStrategy::kNone);
  outside.arena_bytes -= 64;
  EXPECT_NE(CheckPlan(problem, outside).find("past the arena"), std::string::npos);
}

TEST(PlannerTest, EmptyIntervalIsAnError) {
  Problem problem;
  problem.tensors = {{"bad", 10, 3, 2}};
  EXPECT_THROW(SolvePlan(problem, PlanStrategy::kArena), Error);
}

TEST(PlannerTest, BytesThatOverflowAreAnErrorNamingTheTensor) {
  // Each fits in 64 bits; two of them live together do not.
  const size_t big = (SIZE_MAX / 2 + 1) / kPlanAlignment * kPlanAlignment;
  Problem problem;
  problem.tensors = {{"a", big, 0, 1}, {"b", big, 1, 2}};
  for (PlanStrategy strategy : {PlanStrategy::kNone, PlanStrategy::kSlots, PlanStrategy::kArena}) {
    ExpectErrorContaining([&] { SolvePlan(problem, strategy); }, {"tensor '", "overflows"});
  }
  ExpectErrorContaining([&] { LowerBoundBytes(problem); }, {"overflows"});
  // Apart in time they could share their bytes, but the naive figure every
  // plan reports (their sum) cannot be written: still an error, never a
  // wrapped number.
  problem.tensors[1].first_step = 2;
  EXPECT_EQ(LowerBoundBytes(problem), big);
  ExpectErrorContaining([&] { SolvePlan(problem, PlanStrategy::kArena); },
                        {"the naive bytes up to tensor 'b' overflows"});
  // Alignment itself must not wrap.
  ExpectErrorContaining([] { AlignedBytes(SIZE_MAX - 3); }, {"overflows"});
}

/// A random layered DAG scheduled forward then backward, turned into tensors
/// the way liveness does: data from its producer to its last reader (some
/// backward steps read data), diffs from the first backward write to the
/// producer's backward, saved buffers from forward to backward, scratch at
/// one step.
Problem RandomDagProblem(std::mt19937* rng) {
  const int nodes = std::uniform_int_distribution<int>(2, 30)(*rng);
  const int steps = 2 * nodes;
  auto backward_step = [&](int node) { return steps - 1 - node; };
  std::uniform_real_distribution<double> log_size(6, 20);  // 64 B .. 1 MiB
  std::bernoulli_distribution coin(0.5);
  std::vector<std::vector<int>> consumers(nodes);
  for (int i = 1; i < nodes; ++i) {
    const int reads = std::uniform_int_distribution<int>(1, std::min(i, 3))(*rng);
    for (int r = 0; r < reads; ++r) {
      consumers[std::uniform_int_distribution<int>(0, i - 1)(*rng)].push_back(i);
    }
  }
  Problem problem;
  for (int i = 0; i < nodes; ++i) {
    const size_t bytes = static_cast<size_t>(std::exp2(log_size(*rng)));
    int last_read = i;
    if (coin(*rng)) last_read = backward_step(i);  // own backward reads the top
    for (int c : consumers[i]) {
      last_read = std::max(last_read, c);
      if (coin(*rng)) last_read = std::max(last_read, backward_step(c));
    }
    problem.tensors.push_back({"data" + std::to_string(i), bytes, i, last_read});
    if (!consumers[i].empty()) {
      int first_write = steps;
      for (int c : consumers[i]) first_write = std::min(first_write, backward_step(c));
      problem.tensors.push_back({"diff" + std::to_string(i), bytes, first_write, backward_step(i)});
    }
    if (coin(*rng)) {
      problem.tensors.push_back({"saved" + std::to_string(i), bytes / 2, i, backward_step(i)});
    }
    if (coin(*rng)) problem.tensors.push_back({"scratch" + std::to_string(i), bytes, i, i});
  }
  return problem;
}

TEST(PlannerTest, TenThousandRandomDagsPlanSafelyAndInOrder) {
  std::mt19937 rng(2024);
  double arena_over_bound = 0;
  for (int trial = 0; trial < 10000; ++trial) {
    Problem problem = RandomDagProblem(&rng);
    Plan none = SolvePlan(problem, PlanStrategy::kNone);
    Plan slots = SolvePlan(problem, PlanStrategy::kSlots);
    Plan arena = SolvePlan(problem, PlanStrategy::kArena);
    for (const Plan* plan : {&none, &slots, &arena}) {
      ASSERT_EQ(CheckPlan(problem, *plan), "")
          << "trial " << trial << " strategy " << PlanStrategyName(plan->strategy);
    }
    ASSERT_LE(arena.lower_bound_bytes, arena.arena_bytes) << "trial " << trial;
    ASSERT_LE(arena.arena_bytes, slots.arena_bytes) << "trial " << trial;
    ASSERT_LE(slots.arena_bytes, none.arena_bytes) << "trial " << trial;
    arena_over_bound += static_cast<double>(arena.arena_bytes) / arena.lower_bound_bytes;
  }
  // On average the greedy arena sits close to the bound on such graphs.
  RecordProperty("mean_arena_over_bound", std::to_string(arena_over_bound / 10000));
  EXPECT_LT(arena_over_bound / 10000, 1.01);  // measured 1.0014
}

}  // namespace
}  // namespace demi
