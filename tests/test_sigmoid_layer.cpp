#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "demi/layers/sigmoid_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kLn3 = std::log(3.0f);

TEST(SigmoidLayerTest, ForwardMatchesHandComputed) {
  Blob x({1, 5});
  FillValues(&x, {0, kLn3, -kLn3, 40, -40});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Sigmoid")");
  layer->SetUp(bottom, top);
  EXPECT_EQ(y.shape(), x.shape());
  layer->Forward(bottom, top);
  // 1 / (1 + 1/3) = 3/4 and 1 / (1 + 3) = 1/4; +-40 saturate without overflow.
  const std::vector<float> expected{0.5f, 0.75f, 0.25f, 1.0f, 0.0f};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(y.cpu_data()[i], expected[i], 1e-6) << i;
}

TEST(SigmoidLayerTest, BackwardReadsOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "Sigmoid")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  Blob x({3});
  FillValues(&x, {0, kLn3, -kLn3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  Set(x.count(), std::numeric_limits<float>::quiet_NaN(), x.mutable_cpu_data());
  FillValues(&y, {0.5f, 0.75f, 0.25f});  // restore exact values to compare with
  const std::vector<float> dy{1, 2, -4};
  std::copy(dy.begin(), dy.end(), y.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);
  // y (1 - y): 1/4, 3/16, 3/16.
  EXPECT_EQ(DiffOf(x), (std::vector<float>{0.25f, 0.375f, -0.75f}));
}

TEST(SigmoidLayerTest, InPlaceMatchesOutOfPlace) {
  Blob x({2, 3, 4, 5});
  FillGaussian(&x, 21, 3.0f);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Sigmoid")");
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  FillGaussian(&y, 22);
  std::vector<float> dy = DataOf(y);
  layer->Forward(bottom, top);
  std::copy(dy.begin(), dy.end(), y.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);

  Blob z({2, 3, 4, 5});
  z.CopyFrom(x);
  std::vector<Blob*> in_place{&z};
  auto layer2 = MakeLayer(R"(type: "Sigmoid")");
  layer2->SetUp(in_place, in_place);
  layer2->Forward(in_place, in_place);
  EXPECT_EQ(DataOf(z), DataOf(y));
  std::copy(dy.begin(), dy.end(), z.mutable_cpu_diff());
  layer2->Backward(in_place, {true}, in_place);
  EXPECT_EQ(DiffOf(z), DiffOf(x));
}

TEST(SigmoidLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {1}, {13}, {127}, {1, 13, 1, 1}}) {
    Blob x(shape);
    FillGaussian(&x, 31, 2.0f);
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(R"(type: "Sigmoid")");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

}  // namespace
}  // namespace demi
