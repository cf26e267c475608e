#include <gtest/gtest.h>

#include <limits>

#include "demi/layers/euclidean_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class EuclideanLossLayerTest : public ::testing::Test {
 protected:
  // a - b = [1, 0, -2, 3]: sum of squares 14, over 2 N = 4 gives 3.5.
  EuclideanLossLayerTest() : a_({2, 2}), b_({2, 2}) {
    FillValues(&a_, {1, 2, 3, 4});
    FillValues(&b_, {0, 2, 5, 1});
  }
  Blob a_;
  Blob b_;
  Blob loss_;
  std::vector<Blob*> bottom_{&a_, &b_};
  std::vector<Blob*> top_{&loss_};
};

TEST_F(EuclideanLossLayerTest, ForwardMatchesHandComputed) {
  auto layer = MakeLayer(R"(type: "EuclideanLoss")");
  layer->SetUp(bottom_, top_);
  EXPECT_EQ(loss_.count(), 1);
  EXPECT_EQ(layer->Forward(bottom_, top_), 3.5f);
  EXPECT_EQ(loss_.cpu_data()[0], 3.5f);
  auto weighted = MakeLayer(R"(type: "EuclideanLoss" loss_weight: 2)");
  weighted->SetUp(bottom_, top_);
  EXPECT_EQ(weighted->Forward(bottom_, top_), 7.0f);
  EXPECT_EQ(loss_.cpu_data()[0], 3.5f);
}

TEST_F(EuclideanLossLayerTest, BackwardMatchesHandComputedAndReadsNoData) {
  auto layer = MakeLayer(R"(type: "EuclideanLoss" loss_weight: 2)");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_TRUE(layer->AllowForceBackward(0));
  EXPECT_TRUE(layer->AllowForceBackward(1));
  layer->SetUp(bottom_, top_);
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  layer->Forward(bottom_, top_);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Set(a_.count(), nan, a_.mutable_cpu_data());
  Set(b_.count(), nan, b_.mutable_cpu_data());
  Set(loss_.count(), nan, loss_.mutable_cpu_data());
  layer->Backward(top_, {true, true}, bottom_);
  // da = weight (a - b) / N = 2 [1, 0, -2, 3] / 2; db = -da.
  EXPECT_EQ(DiffOf(a_), (std::vector<float>{1, 0, -2, 3}));
  EXPECT_EQ(DiffOf(b_), (std::vector<float>{-1, 0, 2, -3}));

  Set(a_.count(), 9.0f, a_.mutable_cpu_diff());
  layer->Backward(top_, {true, false}, bottom_);
  EXPECT_EQ(DiffOf(a_), (std::vector<float>{1, 0, -2, 3}));
  EXPECT_EQ(DiffOf(b_), (std::vector<float>{-1, 0, 2, -3}));
}

TEST_F(EuclideanLossLayerTest, Gradient) {
  Blob a({2, 3, 4, 5});
  Blob b({2, 3, 4, 5});
  FillGaussian(&a, 121);
  FillGaussian(&b, 122);
  std::vector<Blob*> bottom{&a, &b};
  auto layer = MakeLayer(R"(type: "EuclideanLoss" loss_weight: 0.5)");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom, top_);
}

TEST_F(EuclideanLossLayerTest, GradientOddShapes) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes{
      {{1, 13}, {1, 13}}, {{127}, {127}}, {{13, 1}, {13}}, {{1}, {1}}, {{3, 1, 5, 1}, {3, 5}}};
  for (const auto& [shape_a, shape_b] : shapes) {
    Blob a(shape_a);
    Blob b(shape_b);
    FillGaussian(&a, 131);
    FillGaussian(&b, 132);
    std::vector<Blob*> bottom{&a, &b};
    auto layer = MakeLayer(R"(type: "EuclideanLoss")");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top_);
  }
}

TEST_F(EuclideanLossLayerTest, CountMismatchIsAnError) {
  Blob a({2, 3});
  Blob b({2, 4});
  std::vector<Blob*> bottom{&a, &b};
  auto layer = MakeLayer(R"(name: "l2" type: "EuclideanLoss")");
  ExpectErrorContaining([&] { layer->SetUp(bottom, top_); },
                        {"EuclideanLoss layer 'l2'", "2 3 (6)", "2 4 (8)"});
}

}  // namespace
}  // namespace demi
