#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "demi/layers/multinomial_logistic_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Probabilities [[1/2, 1/4, 1/4], [0, 0.9, 0.1]] with labels [1, 0]: the
/// second item's probability 0 is clamped to 1e-20.
class MultinomialLogisticLossLayerTest : public ::testing::Test {
 protected:
  MultinomialLogisticLossLayerTest() : prob_({2, 3}), labels_({2}) {
    FillValues(&prob_, {0.5f, 0.25f, 0.25f, 0, 0.9f, 0.1f});
    FillValues(&labels_, {1, 0});
  }
  Blob prob_;
  Blob labels_;
  Blob loss_;
  std::vector<Blob*> bottom_{&prob_, &labels_};
  std::vector<Blob*> top_{&loss_};
};

TEST_F(MultinomialLogisticLossLayerTest, ForwardMatchesHandComputed) {
  auto layer = MakeLayer(R"(type: "MultinomialLogisticLoss")");
  layer->SetUp(bottom_, top_);
  // (ln 4 + 20 ln 10) / 2
  EXPECT_NEAR(layer->Forward(bottom_, top_), (std::log(4.0f) + 20 * std::log(10.0f)) / 2, 1e-4);
  FillValues(&labels_, {0, 1});
  EXPECT_NEAR(layer->Forward(bottom_, top_), (std::log(2.0f) - std::log(0.9f)) / 2, 1e-6);
}

TEST_F(MultinomialLogisticLossLayerTest, BackwardMatchesHandComputedReadingTheBottoms) {
  auto layer = MakeLayer(R"(type: "MultinomialLogisticLoss" loss_weight: 3)");
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  layer->SetUp(bottom_, top_);
  layer->Forward(bottom_, top_);
  Set(1, std::numeric_limits<float>::quiet_NaN(), loss_.mutable_cpu_data());
  Set(prob_.count(), 7.0f, prob_.mutable_cpu_diff());
  layer->Backward(top_, {true, false}, bottom_);
  // -w / (N p) at the label, 0 elsewhere.
  const std::vector<float> expected{0, -6, 0, -1.5e20f, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(prob_.cpu_diff()[i], expected[i]) << i;
}

TEST_F(MultinomialLogisticLossLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{5, 4}, {13, 1}, {1, 127}, {2, 3, 2, 2}, {127, 2}}) {
    SCOPED_TRACE(ShapeString(shape));
    Blob prob(shape);
    FillUniform(&prob, 441, 0.1f, 1.0f);
    Blob labels({shape[0]});
    const int64_t dim = prob.count(1);
    for (int64_t n = 0; n < shape[0]; ++n) {
      labels.mutable_cpu_data()[n] = static_cast<float>(n * 5 % dim);
    }
    std::vector<Blob*> bottom{&prob, &labels};
    auto layer = MakeLayer(R"(type: "MultinomialLogisticLoss")");
    GradientChecker checker(1e-3f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top_, 0);
  }
}

TEST_F(MultinomialLogisticLossLayerTest, ErrorsNameTheLayer) {
  Blob labels({2, 2});
  std::vector<Blob*> bad{&prob_, &labels};
  auto count = MakeLayer(R"(name: "nll" type: "MultinomialLogisticLoss")");
  ExpectErrorContaining([&] { count->SetUp(bad, top_); }, {"MultinomialLogisticLoss layer 'nll'",
                                                           "2 3 (6) need 2 labels", "2 2 (4)"});
  auto layer = MakeLayer(R"(name: "nll" type: "MultinomialLogisticLoss")");
  layer->SetUp(bottom_, top_);
  labels_.mutable_cpu_data()[0] = 3;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                        {"MultinomialLogisticLoss layer 'nll'", "label 3 at index 0", "[0, 3)"});
  labels_.mutable_cpu_data()[0] = 0.5f;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); }, {"label 0.5 at index 0"});
  labels_.mutable_cpu_data()[0] = 1;
  layer->Forward(bottom_, top_);
  ExpectErrorContaining(
      [&] {
        layer->Backward(top_, {true, true}, bottom_);
      },
      {"MultinomialLogisticLoss layer 'nll'", "cannot backpropagate to labels"});
}

}  // namespace
}  // namespace demi
