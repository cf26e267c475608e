// The Threshold layer: hand-computed values, what Backward reads, in place and
// gradient checks.
#include "neuron_test_util.hpp"

namespace demi {
namespace {

TEST(ThresholdLayerTest, ForwardMatchesHandComputed) {
  Blob x({5});
  FillValues(&x, {0.4f, 0.5f, 0.6f, -1, 7});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto at_half = MakeLayer(R"(type: "Threshold" threshold_param { threshold: 0.5 })");
  at_half->SetUp(bottom, top);
  at_half->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), (std::vector<float>{0, 0, 1, 0, 1}));
  Blob z({1, 3});
  FillValues(&z, {-0.1f, 0, 0.1f});
  std::vector<Blob*> blobs{&z};
  auto layer = MakeLayer(R"(type: "Threshold")");
  layer->SetUp(blobs, blobs);
  layer->Forward(blobs, blobs);
  EXPECT_EQ(DataOf(z), (std::vector<float>{0, 0, 1}));
}

TEST(ThresholdLayerTest, HasNoGradient) {
  auto layer = MakeLayer(R"(name: "step" type: "Threshold")");
  EXPECT_FALSE(layer->AllowForceBackward(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  Blob x({3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  Set(3, 7.0f, x.mutable_cpu_diff());
  layer->Backward(top, {false}, bottom);
  EXPECT_EQ(DiffOf(x), (std::vector<float>{7, 7, 7}));
  ExpectErrorContaining([&] { layer->Backward(top, {true}, bottom); },
                        {"Threshold layer 'step'", "not differentiable"});
}

}  // namespace
}  // namespace demi
