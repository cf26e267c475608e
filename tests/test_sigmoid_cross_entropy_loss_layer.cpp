#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "demi/layers/sigmoid_cross_entropy_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kLn2 = std::log(2.0f);
const float kLn3 = std::log(3.0f);

/// Scores [0, ln 3, -ln 3, 0] (p = 1/2, 3/4, 1/4, 1/2) against targets
/// [1, 0, 1, 1/2]: the terms are ln 2, ln 4, ln 4, ln 2, in all 6 ln 2.
class SigmoidCrossEntropyLossLayerTest : public ::testing::Test {
 protected:
  SigmoidCrossEntropyLossLayerTest() : x_({2, 2}), t_({2, 2}) {
    FillValues(&x_, {0, kLn3, -kLn3, 0});
    FillValues(&t_, {1, 0, 1, 0.5f});
  }

  float LossOf(const std::string& text) {
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_, top_);
    layer->Forward(bottom_, top_);
    return loss_.cpu_data()[0];
  }

  Blob x_;
  Blob t_;
  Blob loss_;
  std::vector<Blob*> bottom_{&x_, &t_};
  std::vector<Blob*> top_{&loss_};
};

TEST_F(SigmoidCrossEntropyLossLayerTest, ForwardEachNormalization) {
  const std::string type = R"(type: "SigmoidCrossEntropyLoss" )";
  EXPECT_NEAR(LossOf(type), 3 * kLn2, 1e-6);  // BATCH_SIZE by default
  EXPECT_NEAR(LossOf(type + "loss_param { normalization: FULL }"), 1.5f * kLn2, 1e-6);
  EXPECT_NEAR(LossOf(type + "loss_param { normalization: VALID }"), 1.5f * kLn2, 1e-6);
  EXPECT_NEAR(LossOf(type + "loss_param { normalization: NONE }"), 6 * kLn2, 1e-6);
  EXPECT_NEAR(LossOf(type + "loss_param { normalize: true }"), 1.5f * kLn2, 1e-6);
  EXPECT_NEAR(LossOf(type + "loss_param { normalize: false }"), 3 * kLn2, 1e-6);
  // Ignoring the last element (target -1) drops one ln 2.
  t_.mutable_cpu_data()[3] = -1;
  EXPECT_NEAR(LossOf(type + "loss_param { ignore_label: -1 }"), 2.5f * kLn2, 1e-6);
  EXPECT_NEAR(LossOf(type + "loss_param { ignore_label: -1 normalization: VALID }"), 5 * kLn2 / 3,
              1e-6);
}

TEST_F(SigmoidCrossEntropyLossLayerTest, LargeScoresAreStable) {
  Blob x({1, 2});
  FillValues(&x, {100, -100});
  Blob t({1, 2});
  FillValues(&t, {0, 1});
  std::vector<Blob*> bottom{&x, &t};
  auto layer = MakeLayer(R"(type: "SigmoidCrossEntropyLoss")");
  layer->SetUp(bottom, top_);
  EXPECT_FLOAT_EQ(layer->Forward(bottom, top_), 200.0f);
  layer->Backward(top_, {true, false}, bottom);
  EXPECT_EQ(DiffOf(x), (std::vector<float>{1, -1}));
}

TEST_F(SigmoidCrossEntropyLossLayerTest, BackwardMatchesHandComputedAndReadsNoData) {
  auto layer = MakeLayer(R"(type: "SigmoidCrossEntropyLoss" loss_weight: 4
                            loss_param { ignore_label: -1 })");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  t_.mutable_cpu_data()[3] = -1;
  layer->SetUp(bottom_, top_);
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_NEAR(layer->Forward(bottom_, top_), 4 * 2.5f * kLn2, 1e-5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Set(x_.count(), nan, x_.mutable_cpu_data());
  Set(t_.count(), nan, t_.mutable_cpu_data());
  Set(1, nan, loss_.mutable_cpu_data());
  layer->Backward(top_, {true, false}, bottom_);
  // (p - t) * weight 4 / batch 2; 0 where ignored.
  const std::vector<float> expected{-1, 1.5f, -1.5f, 0};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(x_.cpu_diff()[i], expected[i], 1e-6) << i;
}

TEST_F(SigmoidCrossEntropyLossLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {1, 13}, {127, 1}, {13}, {1}}) {
    for (
        const char* text :
        {R"(type: "SigmoidCrossEntropyLoss")",
         R"(type: "SigmoidCrossEntropyLoss" loss_weight: 0.5 loss_param { normalization: FULL })",
         R"(type: "SigmoidCrossEntropyLoss" loss_param { ignore_label: -1 normalization: VALID })"}) {
      SCOPED_TRACE(ShapeString(shape) + text);
      Blob x(shape);
      FillGaussian(&x, 401, 2.0f);
      Blob t(shape);
      FillUniform(&t, 402, 0, 1);
      for (int64_t i = 0; i < t.count(); i += 3)
        t.mutable_cpu_data()[i] = -1;  // ignored where asked
      for (int64_t i = 1; i < t.count(); i += 3) t.mutable_cpu_data()[i] = 1;
      std::vector<Blob*> bottom{&x, &t};
      auto layer = MakeLayer(text);
      GradientChecker checker(1e-2f, 1e-3f);
      checker.CheckGradient(layer.get(), bottom, top_, 0);
    }
  }
}

TEST_F(SigmoidCrossEntropyLossLayerTest, ErrorsNameTheLayer) {
  Blob t({2, 3});
  std::vector<Blob*> bottom{&x_, &t};
  auto layer = MakeLayer(R"(name: "sce" type: "SigmoidCrossEntropyLoss")");
  ExpectErrorContaining([&] { layer->SetUp(bottom, top_); },
                        {"SigmoidCrossEntropyLoss layer 'sce'", "2 2 (4)", "2 3 (6)"});
  auto ok = MakeLayer(R"(name: "sce" type: "SigmoidCrossEntropyLoss")");
  ok->SetUp(bottom_, top_);
  ok->Forward(bottom_, top_);
  ExpectErrorContaining(
      [&] {
        ok->Backward(top_, {true, true}, bottom_);
      },
      {"SigmoidCrossEntropyLoss layer 'sce'", "cannot backpropagate to targets"});
}

}  // namespace
}  // namespace demi
