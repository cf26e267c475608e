#ifndef DEMI_TESTS_NET_TEST_UTIL_HPP_
#define DEMI_TESTS_NET_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "demi/net.hpp"
#include "test_util.hpp"

namespace demi {

/// Trains the net of `text` for `steps` plain SGD steps under `strategy` and
/// records every loss and every param gradient on the way.
inline std::vector<float> TrainAndRecord(const std::string& text, MemoryOptimization strategy,
                                         int steps = 3) {
  NetParameter param = ParseText<NetParameter>(text);
  param.set_memory_optimization(strategy);
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
/// fails when a layer reads memory in Backward that it did not declare.
inline void ExpectPlannedTrainingMatchesUnplanned(const std::string& text) {
  const std::vector<float> expected = TrainAndRecord(text, NONE);
  for (MemoryOptimization strategy : {SLOTS, ARENA}) {
    EXPECT_EQ(TrainAndRecord(text, strategy), expected) << MemoryOptimization_Name(strategy);
  }
}

}  // namespace demi

#endif  // DEMI_TESTS_NET_TEST_UTIL_HPP_
