#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "demi/layers/tanh_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kLn2 = std::log(2.0f);

TEST(TanHLayerTest, ForwardMatchesHandComputed) {
  Blob x({5, 1});
  FillValues(&x, {0, kLn2, -kLn2, 20, -20});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "TanH")");
  layer->SetUp(bottom, top);
  EXPECT_EQ(y.shape(), x.shape());
  layer->Forward(bottom, top);
  // tanh(ln 2) = (2 - 1/2) / (2 + 1/2) = 0.6.
  const std::vector<float> expected{0.0f, 0.6f, -0.6f, 1.0f, -1.0f};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(y.cpu_data()[i], expected[i], 1e-6) << i;
}

TEST(TanHLayerTest, BackwardReadsOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "TanH")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  Blob x({3});
  FillValues(&x, {0, kLn2, -kLn2});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  Set(x.count(), std::numeric_limits<float>::quiet_NaN(), x.mutable_cpu_data());
  FillValues(&y, {0.0f, 0.5f, -0.5f});  // the top alone decides the gradient
  const std::vector<float> dy{2, 4, -1};
  std::copy(dy.begin(), dy.end(), y.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);
  // dy (1 - y^2): 2 * 1, 4 * 0.75, -1 * 0.75.
  EXPECT_EQ(DiffOf(x), (std::vector<float>{2.0f, 3.0f, -0.75f}));
}

TEST(TanHLayerTest, InPlaceMatchesOutOfPlace) {
  Blob x({3, 1, 7, 2});
  FillGaussian(&x, 41, 2.0f);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "TanH")");
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  FillGaussian(&y, 42);
  std::vector<float> dy = DataOf(y);
  layer->Forward(bottom, top);
  std::copy(dy.begin(), dy.end(), y.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);

  Blob z({3, 1, 7, 2});
  z.CopyFrom(x);
  std::vector<Blob*> in_place{&z};
  auto layer2 = MakeLayer(R"(type: "TanH")");
  layer2->SetUp(in_place, in_place);
  layer2->Forward(in_place, in_place);
  EXPECT_EQ(DataOf(z), DataOf(y));
  std::copy(dy.begin(), dy.end(), z.mutable_cpu_diff());
  layer2->Backward(in_place, {true}, in_place);
  EXPECT_EQ(DiffOf(z), DiffOf(x));
}

TEST(TanHLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {1}, {13}, {127}, {13, 1, 1, 1}}) {
    Blob x(shape);
    FillGaussian(&x, 51);
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(R"(type: "TanH")");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

}  // namespace
}  // namespace demi
