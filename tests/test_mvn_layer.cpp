#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "demi/layers/mvn_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kSqrt2 = std::sqrt(2.0f);
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// One item, two channels of 4: [1, 3, 1, 3] (mean 2, std 1) and [0, 4, 2, 2]
/// (mean 2, std sqrt 2).
class MVNLayerTest : public ::testing::Test {
 protected:
  MVNLayerTest() : x_({1, 2, 4}) { FillValues(&x_, {1, 3, 1, 3, 0, 4, 2, 2}); }

  std::vector<float> ForwardOf(const std::string& text) {
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_, top_);
    layer->Forward(bottom_, top_);
    return DataOf(y_);
  }

  void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-6) << i;
  }

  Blob x_;
  Blob y_;
  std::vector<Blob*> bottom_{&x_};
  std::vector<Blob*> top_{&y_};
};

TEST_F(MVNLayerTest, ForwardEachMode) {
  ExpectNear(ForwardOf(R"(type: "MVN")"), {-1, 1, -1, 1, -kSqrt2, kSqrt2, 0, 0});
  ExpectNear(ForwardOf(R"(type: "MVN" mvn_param { normalize_variance: false })"),
             {-1, 1, -1, 1, -2, 2, 0, 0});
  // Across channels: mean 2, variance (4 * 1 + 2 * 4) / 8 = 1.5.
  const float s = std::sqrt(1.5f);
  ExpectNear(ForwardOf(R"(type: "MVN" mvn_param { across_channels: true })"),
             {-1 / s, 1 / s, -1 / s, 1 / s, -2 / s, 2 / s, 0, 0});
  // eps is added to the std (1 + 1), not to the variance (sqrt(1 + 1)).
  ExpectNear(ForwardOf(R"(type: "MVN" mvn_param { eps: 1 })"),
             {-0.5f, 0.5f, -0.5f, 0.5f, -2 / (kSqrt2 + 1), 2 / (kSqrt2 + 1), 0, 0});
  // A constant slice becomes 0.
  FillValues(&x_, {5, 5, 5, 5, 1, 2, 3, 4});
  const std::vector<float> y = ForwardOf(R"(type: "MVN")");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], 0.0f);
}

TEST_F(MVNLayerTest, BackwardMatchesHandComputedReadingOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "MVN")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  layer->SetUp(bottom_, top_);
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].name, "std");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(layer->buffers()[0].blob->count(), 2);
  layer->Forward(bottom_, top_);
  Set(x_.count(), kNaN, x_.mutable_cpu_data());
  std::copy_n(std::vector<float>{1, 2, 3, 6, 1, 0, 0, 1}.begin(), 8, y_.mutable_cpu_diff());
  layer->Backward(top_, {true}, bottom_);
  // dx = (dy - mean(dy)) / std - y mean(dy y) / std. Channel 0: mean(dy) 3,
  // mean(dy y) 1. Channel 1: mean(dy) 1/2, mean(dy y) = -sqrt(2) / 4.
  const float c = 1 / (2 * kSqrt2);
  ExpectNear(DiffOf(x_), {-1, -2, 1, 2, 0, 0, -c, c});
}

TEST_F(MVNLayerTest, BackwardWithoutVarianceReadsNoData) {
  auto layer = MakeLayer(R"(type: "MVN" mvn_param { normalize_variance: false })");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  layer->SetUp(bottom_, top_);
  EXPECT_TRUE(layer->buffers().empty());
  layer->Forward(bottom_, top_);
  Set(x_.count(), kNaN, x_.mutable_cpu_data());
  Set(y_.count(), kNaN, y_.mutable_cpu_data());
  std::copy_n(std::vector<float>{1, 2, 3, 6, 1, 0, 0, 1}.begin(), 8, y_.mutable_cpu_diff());
  layer->Backward(top_, {true}, bottom_);
  ExpectNear(DiffOf(x_), {-2, -1, 0, 3, 0.5f, -0.5f, -0.5f, 0.5f});
}

TEST_F(MVNLayerTest, InPlaceMatchesOutOfPlace) {
  for (const char* text : {R"(type: "MVN")", R"(type: "MVN" mvn_param { across_channels: true })",
                           R"(type: "MVN" mvn_param { normalize_variance: false })"}) {
    SCOPED_TRACE(text);
    Blob x({2, 3, 4, 5});
    FillGaussian(&x, 381);
    Blob dy({2, 3, 4, 5});
    FillGaussian(&dy, 382);
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(text);
    layer->SetUp(bottom, top);
    layer->Forward(bottom, top);
    Copy(dy.count(), dy.cpu_data(), y.mutable_cpu_diff());
    layer->Backward(top, {true}, bottom);

    Blob z({2, 3, 4, 5});
    z.CopyFrom(x);
    std::vector<Blob*> in_place{&z};
    auto layer2 = MakeLayer(text);
    layer2->SetUp(in_place, in_place);
    layer2->Forward(in_place, in_place);
    EXPECT_EQ(DataOf(z), DataOf(y));
    Copy(dy.count(), dy.cpu_data(), z.mutable_cpu_diff());
    layer2->Backward(in_place, {true}, in_place);
    EXPECT_EQ(DiffOf(z), DiffOf(x));
  }
}

TEST_F(MVNLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {1, 1, 13}, {2, 1, 127}, {3, 2, 1, 1}, {13, 2}}) {
    for (const char* text : {R"(type: "MVN")", R"(type: "MVN" mvn_param { across_channels: true })",
                             R"(type: "MVN" mvn_param { normalize_variance: false })",
                             R"(type: "MVN" mvn_param { eps: 0.5 })"}) {
      SCOPED_TRACE(ShapeString(shape) + text);
      Blob x(shape);
      FillGaussian(&x, 391);
      Blob y;
      std::vector<Blob*> bottom{&x}, top{&y};
      auto layer = MakeLayer(text);
      GradientChecker checker(1e-2f, 1e-3f);
      checker.CheckGradient(layer.get(), bottom, top);
    }
  }
}

}  // namespace
}  // namespace demi
