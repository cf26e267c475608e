// The order the planner chooses, planner side: what constrains an order,
// the floor no order goes below, and the search, on synthetic schedules
// (no Net).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "demi/memory/planner.hpp"
#include "demi/memory/schedule.hpp"
#include "demi/memory/schedule_order.hpp"
#include "demi/memory/schedule_search.hpp"

namespace demi {
namespace {

ScheduledLayer Layer(std::string name, std::vector<int> reads, std::vector<int> writes) {
  ScheduledLayer layer;
  layer.name = std::move(name);
  layer.forward_reads = std::move(reads);
  layer.forward_writes = std::move(writes);
  return layer;
}

/// Forward only: src -> x; x feeds a small branch (b1: x -> b) and a big one
/// (a1: x -> a big, a2: a -> a2 small); join reads b and a2. Written with
/// the small branch first, b stays live over the big one's peak.
Schedule Diamond() {
  Schedule s;
  s.memories = {{"input", 1024, true}, {"x", 4096},  {"b", 4096},
                {"a", 16384},          {"a2", 1024}, {"out", 64, true}};
  s.layers = {Layer("src", {0}, {1}), Layer("b1", {1}, {2}), Layer("a1", {1}, {3}),
              Layer("a2", {3}, {4}), Layer("join", {2, 4}, {5})};
  return s;
}

size_t BoundOf(const Schedule& s, const std::vector<int>& order) {
  return LowerBoundBytes(LivenessProblem(Reordered(s, order)).problem);
}

/// The smallest bound over every order the constraints allow.
size_t ExhaustiveBound(const Schedule& s) {
  const OrderConstraints constraints = ConstrainOrder(s);
  std::vector<int> order(s.layers.size());
  std::iota(order.begin(), order.end(), 0);
  size_t best = BoundOf(s, order);
  do {
    if (CheckOrder(constraints, order).empty()) best = std::min(best, BoundOf(s, order));
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

TEST(ScheduleOrderTest, ReadsAndWritesOrderLayersOnlyWhereTheyConflict) {
  const OrderConstraints c = ConstrainOrder(Diamond());
  EXPECT_EQ(c.predecessors[1], std::vector<int>{0});
  EXPECT_EQ(c.predecessors[2], std::vector<int>{0});
  EXPECT_EQ(c.predecessors[3], std::vector<int>{2});
  EXPECT_EQ(c.predecessors[4], (std::vector<int>{1, 3}));
  EXPECT_EQ(CheckOrder(c, {0, 2, 3, 1, 4}), "");
  EXPECT_NE(CheckOrder(c, {0, 3, 2, 1, 4}).find("must follow"), std::string::npos);
  EXPECT_NE(CheckOrder(c, {0, 1, 2, 3}), "");  // not every layer
  EXPECT_NE(CheckOrder(c, {0, 1, 1, 3, 4}), "");
}

TEST(ScheduleOrderTest, InPlaceWritersFollowEveryReaderOfThePreviousValue) {
  Schedule s;
  s.memories = {{"x", 64}, {"y", 64}, {"z", 64}};
  // L1 reads x; L2 rewrites x in place; L3 reads the new x.
  s.layers = {Layer("L0", {}, {0}), Layer("L1", {0}, {1}), Layer("L2", {0}, {0}),
              Layer("L3", {0}, {2})};
  const OrderConstraints c = ConstrainOrder(s);
  EXPECT_EQ(c.predecessors[2], (std::vector<int>{0, 1}));
  EXPECT_EQ(c.pinned_prefix, 1);  // L0 reads nothing: a data layer, run first
  EXPECT_EQ(c.predecessors[3], (std::vector<int>{2, 0}));
}

TEST(ScheduleOrderTest, OrderGroupsAndBackwardConflictsKeepTheirOrder) {
  Schedule s = Diamond();
  // b1 and a1 are independent in forward; one group (say, a shared param)
  // keeps b1 first.
  s.layers[1].order_groups = {7};
  s.layers[2].order_groups = {7};
  EXPECT_NE(CheckOrder(ConstrainOrder(s), {0, 2, 3, 1, 4}), "");
  // Or their backward steps write one memory (a gradient both add to).
  s = Diamond();
  s.backward = true;
  s.memories.push_back({"shared diff", 64});
  for (int i : {1, 2}) {
    s.layers[i].runs_backward = true;
    s.layers[i].backward_writes = {6};
  }
  EXPECT_NE(CheckOrder(ConstrainOrder(s), {0, 2, 3, 1, 4}), "");
}

TEST(ScheduleSearchTest, ADiamondRunsItsBigBranchFirst) {
  const Schedule s = Diamond();
  const ScheduleChoice choice = ChooseOrder(s);
  // Prototxt order: x, b and a live together; big branch first: x, a, a2.
  EXPECT_EQ(choice.prototxt_bound, 4096u + 4096 + 16384);
  EXPECT_EQ(choice.bound, 4096u + 16384 + 1024);
  EXPECT_EQ(choice.bound, ExhaustiveBound(s));
  EXPECT_EQ(choice.bound, BoundOf(s, choice.order));  // its evaluator agrees
  EXPECT_LE(choice.planned, choice.prototxt_planned);
  EXPECT_EQ(CheckOrder(ConstrainOrder(s), choice.order), "");
  EXPECT_TRUE(choice.changed());
  EXPECT_EQ(choice.order.front(), 0);
  EXPECT_EQ(choice.order.back(), 4);
  EXPECT_LE(choice.order_free_bound, choice.bound);
}

TEST(ScheduleSearchTest, AChainKeepsPrototxtOrderAndMeetsTheFloor) {
  Schedule s;
  s.memories = {{"input", 64, true}, {"m1", 4096}, {"m2", 8192}, {"m3", 64, true}};
  s.layers = {Layer("L0", {0}, {1}), Layer("L1", {1}, {2}), Layer("L2", {2}, {3})};
  const ScheduleChoice choice = ChooseOrder(s);
  EXPECT_FALSE(choice.changed());
  EXPECT_EQ(choice.order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(choice.order_free_bound, choice.prototxt_bound);
  EXPECT_EQ(choice.evaluations, 1);  // the floor proves prototxt order best
}

/// A random net-like schedule with backward: layers read earlier
/// activations (some in place), write new ones, save some for backward,
/// and compute gradients; some share order groups.
Schedule RandomSchedule(std::mt19937* rng) {
  std::uniform_int_distribution<int> num_layers_dist(2, 12), size_dist(1, 64), coin(0, 3);
  const int num_layers = num_layers_dist(*rng);
  Schedule s;
  s.backward = coin(*rng) != 0;
  s.has_scratch = coin(*rng) == 0;
  s.scratch_bytes = 64 * size_dist(*rng);
  s.memories.push_back({"input", 256, true});
  std::vector<int> activations{0};
  for (int i = 0; i < num_layers; ++i) {
    ScheduledLayer layer;
    layer.name = "L" + std::to_string(i);
    const int bottom = activations[std::uniform_int_distribution<int>(
        0, static_cast<int>(activations.size()) - 1)(*rng)];
    layer.forward_reads = {bottom};
    if (coin(*rng) == 0 && bottom != 0) {
      layer.forward_writes = {bottom};  // in place
    } else {
      const int top = static_cast<int>(s.memories.size());
      s.memories.push_back({"m" + std::to_string(top), static_cast<size_t>(64 * size_dist(*rng))});
      layer.forward_writes = {top};
      activations.push_back(top);
    }
    if (s.backward) {
      layer.runs_backward = true;
      const int diff = static_cast<int>(s.memories.size());
      s.memories.push_back({layer.name + " diff", static_cast<size_t>(64 * size_dist(*rng))});
      layer.backward_writes = {diff};
      if (coin(*rng) != 0) layer.backward_reads = {bottom};
      if (coin(*rng) == 0) {
        const int saved = static_cast<int>(s.memories.size());
        s.memories.push_back({layer.name + "/saved", 640, false, true});
        layer.saved = {saved};
      }
    }
    if (coin(*rng) == 0) layer.order_groups = {coin(*rng)};
    s.layers.push_back(layer);
  }
  return s;
}

TEST(ScheduleSearchTest, RandomSchedulesNeverRaiseTheBoundAndChooseDeterministically) {
  std::mt19937 rng(15);
  int changed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Schedule s = RandomSchedule(&rng);
    const ScheduleChoice choice = ChooseOrder(s);
    const std::vector<int> prototxt = [&] {
      std::vector<int> order(s.layers.size());
      std::iota(order.begin(), order.end(), 0);
      return order;
    }();
    ASSERT_EQ(CheckOrder(ConstrainOrder(s), choice.order), "") << "trial " << trial;
    ASSERT_EQ(choice.prototxt_bound, BoundOf(s, prototxt)) << "trial " << trial;
    ASSERT_EQ(choice.bound, BoundOf(s, choice.order)) << "trial " << trial;
    ASSERT_LE(choice.bound, choice.prototxt_bound) << "trial " << trial;
    ASSERT_LE(choice.planned, choice.prototxt_planned) << "trial " << trial;
    ASSERT_LE(choice.order_free_bound, choice.bound) << "trial " << trial;
    if (s.layers.size() <= 8) {
      ASSERT_LE(choice.order_free_bound, ExhaustiveBound(s)) << "trial " << trial;
    }
    ASSERT_EQ(ChooseOrder(s).order, choice.order) << "trial " << trial;
    if (choice.changed()) ++changed;
  }
  EXPECT_GT(changed, 10);  // the search does find better orders
}

}  // namespace
}  // namespace demi
