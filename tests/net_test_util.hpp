#ifndef DEMI_TESTS_NET_TEST_UTIL_HPP_
#define DEMI_TESTS_NET_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "demi/memory/recompute.hpp"
#include "demi/net.hpp"
#include "demi/net_schedule.hpp"
#include "test_util.hpp"

namespace demi {

/// A net's first two layers as prototxt text: DummyData "x" (4 x 3 x `side` x
/// `side`, gaussian) and a 3 x 3 Convolution "conv" into "c" with
/// `num_output` channels.
inline std::string ConvStemText(int side, int num_output) {
  return StrCat(R"(
    layer { name: "data" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 4 dim: 3 dim: )",
                side, " dim: ", side, R"( }
                               data_filler { type: "gaussian" } } }
    layer { name: "conv" type: "Convolution" bottom: "x" top: "c"
            convolution_param { num_output: )",
                num_output, R"( kernel_size: 3 pad: 1
                                weight_filler { type: "xavier" } } })");
}

/// The smallest arena the planner reaches for training `param` by dropping
/// and recomputing activations (its plan without any when none helps).
inline size_t SmallestRecomputedArena(const NetParameter& param) {
  NetParameter train(param);
  train.mutable_state()->set_phase(TRAIN);
  train.set_memory_optimization(NONE);  // binds nothing
  const Net net(train, Context());
  return ChooseRecomputation(DescribeSchedule(net, true, {}).schedule, 1).plan.arena_bytes;
}

/// Trains the net of `text` for `steps` plain SGD steps under `strategy` and
/// records every loss and every param gradient on the way. `budget`: the
/// net's memory_budget (ARENA only).
inline std::vector<float> TrainAndRecord(const std::string& text, MemoryOptimization strategy,
                                         int steps = 3, size_t budget = 0) {
  NetParameter param = ParseText<NetParameter>(text);
  param.set_memory_optimization(strategy);
  param.set_memory_budget(budget);
  param.mutable_state()->set_phase(TRAIN);
  Net net(param, Context());
  std::vector<float> values;
  for (int step = 0; step < steps; ++step) {
    net.ClearParamDiffs();
    values.push_back(net.ForwardBackward());
    for (Blob* p : net.learnable_params()) {
      values.insert(values.end(), p->cpu_diff(), p->cpu_diff() + p->count());
      p->scale_diff(0.1f);
    }
    net.Update();
  }
  return values;
}

/// A planned net (SLOTS and ARENA) must train bit-identically to NONE: this
/// fails when a layer reads memory in Backward that it did not declare. So
/// must ARENA under the smallest memory_budget recomputation reaches: this
/// fails when a layer's replay differs from its forward or changes state.
inline void ExpectPlannedTrainingMatchesUnplanned(const std::string& text) {
  const std::vector<float> expected = TrainAndRecord(text, NONE);
  for (MemoryOptimization strategy : {SLOTS, ARENA}) {
    EXPECT_EQ(TrainAndRecord(text, strategy), expected) << MemoryOptimization_Name(strategy);
  }
  const size_t budget = SmallestRecomputedArena(ParseText<NetParameter>(text));
  EXPECT_EQ(TrainAndRecord(text, ARENA, 3, budget), expected) << "recomputed, budget " << budget;
}

}  // namespace demi

#endif  // DEMI_TESTS_NET_TEST_UTIL_HPP_
