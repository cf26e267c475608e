// The shared steps of the layers' DNNL engines (util/dnnl): a Reshape's
// reset, and the fallback when oneDNN has no primitive for a shape.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "demi/util/dnnl.hpp"

namespace demi {
namespace {

LayerParameter Probe() {
  LayerParameter param;
  param.set_name("probe");
  param.set_type("ReLU");
  return param;
}

TEST(DnnlLayerStateTest, ResetEmptiesTheBuffersAndClearsReady) {
  DnnlLayerState state;
  state.ready = true;
  state.scratchpad.Reshape({DenseDesc({7})});
  Blob buffer(std::vector<int64_t>{13});
  state.Reset({&buffer});
  EXPECT_FALSE(state.ready);
  EXPECT_EQ(buffer.count(), 0);
  EXPECT_EQ(state.scratchpad.blob.count(), 0);
}

TEST(DnnlLayerStateTest, TryDnnlRunsTheBuild) {
  bool built = false;
  EXPECT_TRUE(TryDnnl(Probe(), "anything", [&] { built = true; }));
  EXPECT_TRUE(built);
}

TEST(DnnlLayerStateTest, TryDnnlFallsBackWhereOneDnnHasNoPrimitive) {
  // A reorder between tensors of different dims: oneDNN has none.
  EXPECT_FALSE(TryDnnl(Probe(), "reorder from 2 x 3 to 3 x 2", [] {
    dnnl::reorder::primitive_desc(DnnlEngine(), DenseDesc({2, 3}), DnnlEngine(), DenseDesc({3, 2}));
  }));
}

TEST(DnnlLayerStateTest, TryDnnlPassesOtherErrorsOn) {
  EXPECT_THROW(TryDnnl(Probe(), "anything", [] { throw std::runtime_error("not oneDNN's"); }),
               std::runtime_error);
}

}  // namespace
}  // namespace demi
