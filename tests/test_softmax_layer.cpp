#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "demi/layers/softmax_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kLn2 = std::log(2.0f);
const float kLn3 = std::log(3.0f);

void ExpectNearAll(const std::vector<float>& actual, const std::vector<float>& expected,
                   float tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
  }
}

std::vector<float> RunSoftmax(const std::string& text, Blob* x) {
  Blob y;
  std::vector<Blob*> bottom{x}, top{&y};
  auto layer = MakeLayer(text);
  layer->SetUp(bottom, top);
  EXPECT_EQ(y.shape(), x->shape());
  layer->Forward(bottom, top);
  return DataOf(y);
}

TEST(SoftmaxLayerTest, ForwardMatchesHandComputed) {
  // exp of [0, ln 2, ln 3] is [1, 2, 3]: probabilities 1/6, 2/6, 3/6.
  Blob x({1, 3});
  FillValues(&x, {0, kLn2, kLn3});
  ExpectNearAll(RunSoftmax(R"(type: "Softmax")", &x), {1.0f / 6, 2.0f / 6, 3.0f / 6}, 1e-6f);

  // Shifting by 1000 overflows a naive exp; the max is subtracted first.
  FillValues(&x, {1000, 1000 + kLn2, 1000 + kLn3});
  ExpectNearAll(RunSoftmax(R"(type: "Softmax")", &x), {1.0f / 6, 2.0f / 6, 3.0f / 6}, 1e-4f);
  FillValues(&x, {-1000, -1000 + kLn2, -1000 + kLn3});
  ExpectNearAll(RunSoftmax(R"(type: "Softmax")", &x), {1.0f / 6, 2.0f / 6, 3.0f / 6}, 1e-4f);
}

TEST(SoftmaxLayerTest, ForwardPerSpatialPosition) {
  // 1 x 2 x 1 x 2: position 0 has channels [0, ln 3], position 1 has [0, 0].
  Blob x({1, 2, 1, 2});
  FillValues(&x, {0, 0, kLn3, 0});
  Blob y({1, 2, 1, 2});
  ExpectNearAll(RunSoftmax(R"(type: "Softmax")", &x), {0.25f, 0.5f, 0.75f, 0.5f}, 1e-6f);
}

TEST(SoftmaxLayerTest, ForwardOverNegativeAndLeadingAxes) {
  Blob x({2, 3});
  FillValues(&x, {0, kLn2, kLn3, kLn3, kLn2, 0});
  ExpectNearAll(RunSoftmax(R"(type: "Softmax" softmax_param { axis: -1 })", &x),
                {1.0f / 6, 2.0f / 6, 3.0f / 6, 3.0f / 6, 2.0f / 6, 1.0f / 6}, 1e-6f);
  // Over axis 0 (= -2) the columns are normalized: [0, ln 3], [ln 2, ln 2], [ln 3, 0].
  for (const char* text : {R"(type: "Softmax" softmax_param { axis: 0 })",
                           R"(type: "Softmax" softmax_param { axis: -2 })"}) {
    ExpectNearAll(RunSoftmax(text, &x), {0.25f, 0.5f, 0.75f, 0.75f, 0.5f, 0.25f}, 1e-6f);
  }
}

TEST(SoftmaxLayerTest, BackwardReadsOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "Softmax")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  Blob x({1, 3});
  FillValues(&x, {0, kLn2, kLn3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  Set(x.count(), std::numeric_limits<float>::quiet_NaN(), x.mutable_cpu_data());
  const std::vector<float> dy{1, 0, 0};
  std::copy(dy.begin(), dy.end(), y.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);
  // y = [1/6, 2/6, 3/6], sum(dy y) = 1/6: dx = y (dy - 1/6) = [5/36, -2/36, -3/36].
  const std::vector<float> expected{5.0f / 36, -2.0f / 36, -3.0f / 36};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(x.cpu_diff()[i], expected[i], 1e-6) << i;
}

TEST(SoftmaxLayerTest, InPlaceMatchesOutOfPlace) {
  Blob x({2, 3, 2, 2});
  FillGaussian(&x, 61, 2.0f);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Softmax")");
  layer->SetUp(bottom, top);
  Blob dy_source({2, 3, 2, 2});
  FillGaussian(&dy_source, 62);
  layer->Forward(bottom, top);
  std::copy_n(dy_source.cpu_data(), dy_source.count(), y.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);

  Blob z({2, 3, 2, 2});
  z.CopyFrom(x);
  std::vector<Blob*> in_place{&z};
  auto layer2 = MakeLayer(R"(type: "Softmax")");
  layer2->SetUp(in_place, in_place);
  layer2->Forward(in_place, in_place);
  EXPECT_EQ(DataOf(z), DataOf(y));
  std::copy_n(dy_source.cpu_data(), dy_source.count(), z.mutable_cpu_diff());
  layer2->Backward(in_place, {true}, in_place);
  EXPECT_EQ(DiffOf(z), DiffOf(x));
}

TEST(SoftmaxLayerTest, GradientOverChannelsAndNegativeAxes) {
  for (const char* text : {R"(type: "Softmax")", R"(type: "Softmax" softmax_param { axis: -1 })",
                           R"(type: "Softmax" softmax_param { axis: -3 })",
                           R"(type: "Softmax" softmax_param { axis: 0 })"}) {
    SCOPED_TRACE(text);
    Blob x({2, 3, 2, 2});
    FillGaussian(&x, 71);
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(text);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

TEST(SoftmaxLayerTest, GradientOddShapes) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1, 13}, {13}, {3, 127}, {1, 1}, {2, 13, 1, 3}}) {
    Blob x(shape);
    FillGaussian(&x, 81);
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(shape.size() == 1 ? R"(type: "Softmax" softmax_param { axis: 0 })"
                                             : R"(type: "Softmax")");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

TEST(SoftmaxLayerTest, AxisOutOfRangeIsAnError) {
  Blob x({2, 3, 4, 5});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  for (const char* text : {R"(name: "prob" type: "Softmax" softmax_param { axis: 4 })",
                           R"(name: "prob" type: "Softmax" softmax_param { axis: -5 })"}) {
    auto layer = MakeLayer(text);
    ExpectErrorContaining([&] { layer->SetUp(bottom, top); },
                          {"Softmax layer 'prob'", "softmax_param.axis", "2 3 4 5 (120)"});
  }
}

}  // namespace
}  // namespace demi
