#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "demi/layers/softmax_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kLn2 = std::log(2.0f);
const float kLn3 = std::log(3.0f);

/// Two samples, 3 classes, 2 positions each (2 x 3 x 1 x 2), labels
/// [2, 1, 255, 1] with 255 ignored where asked:
///   sample 0, position 0: exp(scores) [1, 2, 3], label 2: -log(3/6) = ln 2
///   sample 0, position 1: exp(scores) [3, 2, 1], label 1: -log(2/6) = ln 3
///   sample 1, position 0: exp(scores) [1, 1, 1], ignored
///   sample 1, position 1: exp(scores) [2, 1, 1], label 1: -log(1/4) = ln 4
/// The summed loss is ln 24 over 3 valid labels, 2 samples, 4 positions.
class SoftmaxWithLossLayerTest : public ::testing::Test {
 protected:
  SoftmaxWithLossLayerTest() : scores_({2, 3, 1, 2}), labels_({2, 1, 1, 2}) {
    FillValues(&scores_, {0, kLn3, kLn2, kLn2, kLn3, 0,  // sample 0: c0, c1, c2 rows
                          0, kLn2, 0, 0, 0, 0});         // sample 1
    FillValues(&labels_, {2, 1, 255, 1});
  }

  float LossOf(const std::string& text) {
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_, top_);
    layer->Forward(bottom_, top_);
    return loss_.cpu_data()[0];
  }

  Blob scores_;
  Blob labels_;
  Blob loss_;
  std::vector<Blob*> bottom_{&scores_, &labels_};
  std::vector<Blob*> top_{&loss_};
};

TEST_F(SoftmaxWithLossLayerTest, ForwardEachNormalizationMode) {
  const float ln24 = std::log(24.0f);
  const std::string prefix = R"(type: "SoftmaxWithLoss" loss_param { ignore_label: 255 )";
  EXPECT_NEAR(LossOf(prefix + "}"), ln24 / 3, 1e-5);  // VALID by default
  EXPECT_NEAR(LossOf(prefix + "normalization: VALID }"), ln24 / 3, 1e-5);
  EXPECT_NEAR(LossOf(prefix + "normalization: FULL }"), ln24 / 4, 1e-5);
  EXPECT_NEAR(LossOf(prefix + "normalization: BATCH_SIZE }"), ln24 / 2, 1e-5);
  EXPECT_NEAR(LossOf(prefix + "normalization: NONE }"), ln24, 1e-5);
  // Legacy `normalize`: false means BATCH_SIZE, true VALID; `normalization` wins.
  EXPECT_NEAR(LossOf(prefix + "normalize: false }"), ln24 / 2, 1e-5);
  EXPECT_NEAR(LossOf(prefix + "normalize: true }"), ln24 / 3, 1e-5);
  EXPECT_NEAR(LossOf(prefix + "normalize: false normalization: FULL }"), ln24 / 4, 1e-5);
}

TEST_F(SoftmaxWithLossLayerTest, ForwardWithoutIgnoredLabels) {
  // Label 0 at the third position: exp(scores) [1, 1, 1] gives -log(1/3) = ln 3.
  labels_.mutable_cpu_data()[2] = 0;
  const float ln72 = std::log(72.0f);
  EXPECT_NEAR(LossOf(R"(type: "SoftmaxWithLoss")"), ln72 / 4, 1e-5);
  EXPECT_NEAR(LossOf(R"(type: "SoftmaxWithLoss" loss_param { normalization: BATCH_SIZE })"),
              ln72 / 2, 1e-5);
}

TEST_F(SoftmaxWithLossLayerTest, ForwardReturnsWeightedLossAndProbabilities) {
  Blob prob;
  std::vector<Blob*> top{&loss_, &prob};
  auto layer = MakeLayer(R"(type: "SoftmaxWithLoss" loss_weight: 3 loss_weight: 0
                            loss_param { ignore_label: 255 })");
  layer->SetUp(bottom_, top);
  EXPECT_EQ(loss_.count(), 1);
  EXPECT_EQ(prob.shape(), scores_.shape());
  EXPECT_NEAR(layer->Forward(bottom_, top), std::log(24.0f), 1e-5);
  const std::vector<float> expected{1.0f / 6, 3.0f / 6, 2.0f / 6, 2.0f / 6, 3.0f / 6, 1.0f / 6,
                                    1.0f / 3, 1.0f / 2, 1.0f / 3, 1.0f / 4, 1.0f / 3, 1.0f / 4};
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(prob.cpu_data()[i], expected[i], 1e-6) << i;
}

TEST_F(SoftmaxWithLossLayerTest, BackwardMatchesHandComputedAndReadsNoData) {
  auto layer = MakeLayer(R"(type: "SoftmaxWithLoss" loss_weight: 3
                            loss_param { ignore_label: 255 })");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  layer->SetUp(bottom_, top_);
  // The softmax's: the CAFFE engine's scale and the DNNL engine's scratchpad.
  ASSERT_EQ(layer->buffers().size(), 3u);
  EXPECT_EQ(layer->buffers()[0].name, "prob");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(layer->buffers()[1].name, "softmax/scale");
  EXPECT_EQ(layer->buffers()[1].lifetime, BufferLifetime::kScratch);
  EXPECT_EQ(layer->buffers()[2].name, "softmax/dnnl_scratchpad");
  EXPECT_EQ(layer->buffers()[2].lifetime, BufferLifetime::kScratch);
  layer->Forward(bottom_, top_);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Set(scores_.count(), nan, scores_.mutable_cpu_data());
  Set(labels_.count(), nan, labels_.mutable_cpu_data());
  Set(loss_.count(), nan, loss_.mutable_cpu_data());
  Set(scores_.count(), nan, scores_.mutable_cpu_diff());
  layer->Backward(top_, {true, false}, bottom_);
  // (p - onehot(label)) * loss weight 3 / 3 valid labels; zero where ignored.
  const std::vector<float> expected{1.0f / 6, 1.0f / 2, 1.0f / 3, -2.0f / 3, -1.0f / 2, 1.0f / 6,
                                    0,        1.0f / 2, 0,        -3.0f / 4, 0,         1.0f / 4};
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(scores_.cpu_diff()[i], expected[i], 1e-6) << i;
}

TEST_F(SoftmaxWithLossLayerTest, GradientEachNormalizationMode) {
  Blob scores({2, 3, 2, 2});
  FillGaussian(&scores, 91, 2.0f);
  Blob labels({2, 1, 2, 2});
  FillValues(&labels, {0, 2, 1, 0, 2, 1, 0, 2});
  std::vector<Blob*> bottom{&scores, &labels};
  for (const char* text :
       {R"(type: "SoftmaxWithLoss")", R"(type: "SoftmaxWithLoss" loss_param { ignore_label: 1 })",
        R"(type: "SoftmaxWithLoss" loss_param { ignore_label: 0 normalization: FULL })",
        R"(type: "SoftmaxWithLoss" loss_param { ignore_label: 2 normalization: BATCH_SIZE })",
        R"(type: "SoftmaxWithLoss" loss_param { normalization: NONE })",
        R"(type: "SoftmaxWithLoss" loss_param { normalize: false })"}) {
    SCOPED_TRACE(text);
    auto layer = MakeLayer(text);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top_, 0);
  }
}

TEST_F(SoftmaxWithLossLayerTest, GradientOtherAxesAndOddShapes) {
  struct Case {
    std::vector<int64_t> scores;
    std::vector<int64_t> labels;
    int64_t classes;
    const char* text;
  };
  const std::vector<Case> cases{
      {{2, 3, 4}, {2, 3}, 4, R"(type: "SoftmaxWithLoss" softmax_param { axis: -1 })"},
      {{2, 3, 4}, {2, 4}, 3, R"(type: "SoftmaxWithLoss" softmax_param { axis: -2 })"},
      {{13, 5}, {13}, 5, R"(type: "SoftmaxWithLoss")"},
      {{1, 127}, {1}, 127, R"(type: "SoftmaxWithLoss")"},
      {{1, 2, 1, 13}, {1, 1, 1, 13}, 2, R"(type: "SoftmaxWithLoss")"},
      {{3, 1}, {3}, 1, R"(type: "SoftmaxWithLoss")"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Blob scores(c.scores);
    FillGaussian(&scores, 101);
    Blob labels(c.labels);
    for (int i = 0; i < labels.count(); ++i) {
      labels.mutable_cpu_data()[i] = static_cast<float>(i * 7 % c.classes);
    }
    std::vector<Blob*> bottom{&scores, &labels};
    auto layer = MakeLayer(c.text);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top_, 0);
  }
}

TEST_F(SoftmaxWithLossLayerTest, LabelCountMismatchIsAnError) {
  Blob labels({2, 3});
  std::vector<Blob*> bottom{&scores_, &labels};
  auto layer = MakeLayer(R"(name: "loss" type: "SoftmaxWithLoss")");
  ExpectErrorContaining([&] { layer->SetUp(bottom, top_); },
                        {"SoftmaxWithLoss layer 'loss'", "2 3 1 2 (12)", "2 3 (6)"});
}

TEST_F(SoftmaxWithLossLayerTest, AxisOutOfRangeIsAnError) {
  auto layer = MakeLayer(R"(name: "loss" type: "SoftmaxWithLoss" softmax_param { axis: -5 })");
  ExpectErrorContaining([&] { layer->SetUp(bottom_, top_); },
                        {"'loss'", "softmax_param.axis -5", "2 3 1 2 (12)"});
}

TEST_F(SoftmaxWithLossLayerTest, RepeatedSetUpKeepsOneSetOfBuffers) {
  auto layer = MakeLayer(R"(type: "SoftmaxWithLoss" loss_param { ignore_label: 255 })");
  layer->SetUp(bottom_, top_);
  const size_t buffers = layer->buffers().size();
  layer->SetUp(bottom_, top_);
  EXPECT_EQ(layer->buffers().size(), buffers);
  EXPECT_NEAR(layer->Forward(bottom_, top_), std::log(24.0f) / 3, 1e-5);
}

TEST_F(SoftmaxWithLossLayerTest, LabelOutOfRangeIsAnError) {
  auto layer = MakeLayer(R"(name: "loss" type: "SoftmaxWithLoss")");
  layer->SetUp(bottom_, top_);
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                        {"SoftmaxWithLoss layer 'loss'", "label 255", "index 2"});
  labels_.mutable_cpu_data()[2] = 0;
  labels_.mutable_cpu_data()[3] = -1;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                        {"SoftmaxWithLoss layer 'loss'", "label -1", "index 3"});
  labels_.mutable_cpu_data()[3] = 3;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); }, {"label 3", "index 3"});
  // A NaN or infinite label is no class (ClassLabel), never converted as one.
  for (float label : {std::numeric_limits<float>::quiet_NaN(), HUGE_VALF}) {
    labels_.mutable_cpu_data()[3] = label;
    ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                          {"label at index 3 is NaN, infinite or past int64's range"});
  }
}

TEST_F(SoftmaxWithLossLayerTest, BackwardToLabelsIsAnError) {
  auto layer =
      MakeLayer(R"(name: "loss" type: "SoftmaxWithLoss" loss_param { ignore_label: 255 })");
  layer->SetUp(bottom_, top_);
  layer->Forward(bottom_, top_);
  ExpectErrorContaining(
      [&] {
        layer->Backward(top_, {true, true}, bottom_);
      },
      {"SoftmaxWithLoss layer 'loss'", "cannot backpropagate to labels"});
}

}  // namespace
}  // namespace demi
