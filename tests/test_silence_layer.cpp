#include <gtest/gtest.h>

#include <limits>

#include "demi/layers/silence_layer.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(SilenceLayerTest, ConsumesBottomsAndWritesZeroGradientsWhereAsked) {
  Blob a({2, 3});
  Blob b({13});
  FillGaussian(&a, 371);
  FillGaussian(&b, 372);
  const std::vector<float> a_before = DataOf(a);
  std::vector<Blob*> bottom{&a, &b}, top;
  auto layer = MakeLayer(R"(type: "Silence")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(1));
  layer->SetUp(bottom, top);
  EXPECT_EQ(layer->Forward(bottom, top), 0.0f);
  EXPECT_EQ(DataOf(a), a_before);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Set(a.count(), nan, a.mutable_cpu_data());
  Set(b.count(), nan, b.mutable_cpu_data());
  Set(a.count(), 7.0f, a.mutable_cpu_diff());
  Set(b.count(), 7.0f, b.mutable_cpu_diff());
  layer->Backward(top, {true, false}, bottom);
  EXPECT_EQ(DiffOf(a), std::vector<float>(6, 0.0f));
  EXPECT_EQ(DiffOf(b), std::vector<float>(13, 7.0f));
  layer->Backward(top, {false, true}, bottom);
  EXPECT_EQ(DiffOf(b), std::vector<float>(13, 0.0f));
}

TEST(SilenceLayerTest, TakesAtLeastOneBottomAndNoTops) {
  Blob a({2});
  Blob y;
  std::vector<Blob*> none, one{&a}, top{&y};
  auto layer = MakeLayer(R"(name: "quiet" type: "Silence")");
  ExpectErrorContaining([&] { layer->SetUp(none, none); }, {"Silence layer 'quiet'", "at least 1"});
  ExpectErrorContaining([&] { layer->SetUp(one, top); }, {"exactly 0 top"});
}

}  // namespace
}  // namespace demi
