#include <gtest/gtest.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

#include "demi/layers/infogain_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kLn2 = std::log(2.0f);
const float kLn3 = std::log(3.0f);
const float kLn6 = std::log(6.0f);
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Scores [[0, ln 2, ln 3], [ln 3, ln 2, 0]] give the probabilities
/// [[1/6, 2/6, 3/6], [3/6, 2/6, 1/6]]; labels [0, 2] and
/// H = [[1, 0.5, 0], [0, 1, 0], [0.25, 0, 2]]:
///   item 0, row [1, 0.5, 0]: -(ln 1/6 + 0.5 ln 1/3) = ln 6 + 0.5 ln 3
///   item 1, row [0.25, 0, 2]: -(0.25 ln 1/2 + 2 ln 1/6) = 0.25 ln 2 + 2 ln 6
/// Unscaled gradient p_c sum_k H[l, k] - H[l, c]:
///   item 0 (row sum 1.5): [1/4 - 1, 1/2 - 1/2, 3/4 - 0] = [-0.75, 0, 0.75]
///   item 1 (row sum 2.25): [9/8 - 1/4, 3/4 - 0, 3/8 - 2] = [0.875, 0.75, -1.625]
class InfogainLossLayerTest : public ::testing::Test {
 protected:
  InfogainLossLayerTest() : scores_({2, 3}), labels_({2}), infogain_({3, 3}) {
    FillValues(&scores_, {0, kLn2, kLn3, kLn3, kLn2, 0});
    FillValues(&labels_, {0, 2});
    FillValues(&infogain_, {1, 0.5f, 0, 0, 1, 0, 0.25f, 0, 2});
  }

  /// Writes H as a binary BlobProto and returns its path.
  std::string WriteInfogainFile() {
    const std::string path =
        ::testing::TempDir() + "/infogain_" + std::to_string(::getpid()) + ".binaryproto";
    BlobProto proto;
    infogain_.ToProto(&proto);
    WriteProtoToBinaryFile(proto, path);
    return path;
  }

  Blob scores_;
  Blob labels_;
  Blob infogain_;
  Blob loss_;
  std::vector<Blob*> bottom_{&scores_, &labels_, &infogain_};
  std::vector<Blob*> top_{&loss_};
};

const float kTotal = kLn6 + 0.5f * kLn3 + 0.25f * kLn2 + 2 * kLn6;  // 6.0978713

TEST_F(InfogainLossLayerTest, ForwardWithTheMatrixAsABottomOrAFile) {
  auto layer = MakeLayer(R"(type: "InfogainLoss")");
  layer->SetUp(bottom_, top_);
  EXPECT_NEAR(layer->Forward(bottom_, top_), kTotal / 2, 1e-5);  // over 2 labels
  EXPECT_NEAR(kTotal / 2, 3.0489356f, 1e-5);

  const std::string path = WriteInfogainFile();
  std::vector<Blob*> two{&scores_, &labels_};
  auto from_file =
      MakeLayer(R"(type: "InfogainLoss" infogain_loss_param { source: ")" + path + R"(" })");
  from_file->SetUp(two, top_);
  EXPECT_NEAR(from_file->Forward(two, top_), kTotal / 2, 1e-5);
  ::unlink(path.c_str());

  auto ignoring = MakeLayer(R"(type: "InfogainLoss" loss_param { ignore_label: 2 })");
  ignoring->SetUp(bottom_, top_);
  EXPECT_NEAR(ignoring->Forward(bottom_, top_), kLn6 + 0.5f * kLn3, 1e-5);
  auto none = MakeLayer(R"(type: "InfogainLoss" loss_param { normalization: NONE })");
  none->SetUp(bottom_, top_);
  EXPECT_NEAR(none->Forward(bottom_, top_), kTotal, 1e-5);
  auto batch = MakeLayer(R"(type: "InfogainLoss" loss_param { normalize: false })");
  batch->SetUp(bottom_, top_);
  EXPECT_NEAR(batch->Forward(bottom_, top_), kTotal / 2, 1e-5);
}

TEST_F(InfogainLossLayerTest, SecondTopHoldsTheProbabilities) {
  Blob prob;
  std::vector<Blob*> top{&loss_, &prob};
  auto layer = MakeLayer(R"(type: "InfogainLoss" loss_weight: 1 loss_weight: 0)");
  layer->SetUp(bottom_, top);
  EXPECT_EQ(prob.shape(), scores_.shape());
  EXPECT_NEAR(layer->Forward(bottom_, top), kTotal / 2, 1e-5);
  const std::vector<float> expected{1 / 6.0f, 2 / 6.0f, 3 / 6.0f, 3 / 6.0f, 2 / 6.0f, 1 / 6.0f};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(prob.cpu_data()[i], expected[i], 1e-6) << i;
}

TEST_F(InfogainLossLayerTest, IdentityMatrixGivesSoftmaxWithLoss) {
  FillValues(&infogain_, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  auto layer = MakeLayer(R"(type: "InfogainLoss")");
  layer->SetUp(bottom_, top_);
  EXPECT_NEAR(layer->Forward(bottom_, top_), kLn6, 1e-5);  // -(ln 1/6 + ln 1/6) / 2

  Blob scores({3, 5, 2});
  FillGaussian(&scores, 31, 2.0f);
  Blob labels({3, 2});
  FillValues(&labels, {0, 4, 2, 255, 1, 3});
  Blob identity({5, 5});
  for (int64_t k = 0; k < 5; ++k) identity.mutable_cpu_data()[k * 5 + k] = 1.0f;
  std::vector<Blob*> bottom{&scores, &labels, &identity};
  auto infogain = MakeLayer(R"(type: "InfogainLoss" loss_param { ignore_label: 255 })");
  infogain->SetUp(bottom, top_);
  const float loss = infogain->Forward(bottom, top_);
  infogain->Backward(top_, {true, false, false}, bottom);
  const std::vector<float> diff = DiffOf(scores);

  Blob softmax_loss;
  std::vector<Blob*> softmax_top{&softmax_loss};
  std::vector<Blob*> softmax_bottom{&scores, &labels};
  auto softmax = MakeLayer(R"(type: "SoftmaxWithLoss" loss_param { ignore_label: 255 })");
  softmax->SetUp(softmax_bottom, softmax_top);
  EXPECT_NEAR(softmax->Forward(softmax_bottom, softmax_top), loss, 1e-5);
  softmax->Backward(softmax_top, {true, false}, softmax_bottom);
  for (int64_t i = 0; i < scores.count(); ++i)
    EXPECT_NEAR(scores.cpu_diff()[i], diff[i], 1e-6) << i;
}

TEST_F(InfogainLossLayerTest, ClassAxisWithInnerPositions) {
  // The same two score vectors as positions 0 and 1 of one 1 x 3 x 2 item.
  Blob scores({1, 3, 2});
  FillValues(&scores, {0, kLn3, kLn2, kLn2, kLn3, 0});
  Blob labels({1, 2});
  FillValues(&labels, {0, 2});
  std::vector<Blob*> bottom{&scores, &labels, &infogain_};
  auto layer = MakeLayer(R"(type: "InfogainLoss" infogain_loss_param { axis: 1 })");
  layer->SetUp(bottom, top_);
  EXPECT_NEAR(layer->Forward(bottom, top_), kTotal / 2, 1e-5);
  layer->Backward(top_, {true, false, false}, bottom);
  const std::vector<float> expected{-0.375f, 0.4375f, 0, 0.375f, 0.375f, -0.8125f};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(scores.cpu_diff()[i], expected[i], 1e-6) << i;
}

TEST_F(InfogainLossLayerTest, VanishingProbabilityIsClamped) {
  Blob scores({1, 3});
  FillValues(&scores, {0, -200, 0});  // p = [1/2, 0 (underflow), 1/2]
  Blob labels({1});
  FillValues(&labels, {0});
  Blob infogain({3, 3});
  FillValues(&infogain, {0, 1, 0, 0, 0, 0, 0, 0, 0});
  std::vector<Blob*> bottom{&scores, &labels, &infogain};
  auto layer = MakeLayer(R"(type: "InfogainLoss" loss_param { normalization: NONE })");
  layer->SetUp(bottom, top_);
  EXPECT_NEAR(layer->Forward(bottom, top_), 87.33655f, 1e-4);  // -ln(FLT_MIN)
  layer->Backward(top_, {true, false, false}, bottom);
  EXPECT_NEAR(scores.cpu_diff()[0], 0.5f, 1e-6);
  EXPECT_NEAR(scores.cpu_diff()[1], -1.0f, 1e-6);
  EXPECT_NEAR(scores.cpu_diff()[2], 0.5f, 1e-6);
}

TEST_F(InfogainLossLayerTest, BackwardMatchesHandComputedReadingNoBottom) {
  auto layer = MakeLayer(R"(type: "InfogainLoss" loss_weight: 2 loss_param { ignore_label: 2 })");
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(layer->BackwardReadsBottomData(i)) << i;
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(1));
  EXPECT_TRUE(layer->AllowForceBackward(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  EXPECT_FALSE(layer->AllowForceBackward(2));
  layer->SetUp(bottom_, top_);
  // The softmax's: the CAFFE engine's scale and the DNNL engine's scratchpad.
  ASSERT_EQ(layer->buffers().size(), 3u);
  EXPECT_EQ(layer->buffers()[0].name, "prob");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(layer->buffers()[1].name, "softmax/scale");
  EXPECT_EQ(layer->buffers()[1].lifetime, BufferLifetime::kScratch);
  EXPECT_EQ(layer->buffers()[2].name, "softmax/dnnl_scratchpad");
  EXPECT_EQ(layer->buffers()[2].lifetime, BufferLifetime::kScratch);

  // Only item 0 counts (normalizer 1): 2 * [-0.75, 0, 0.75]; item 1 is ignored.
  layer->Forward(bottom_, top_);
  Set(scores_.count(), kNaN, scores_.mutable_cpu_data());
  Set(labels_.count(), kNaN, labels_.mutable_cpu_data());
  Set(infogain_.count(), kNaN, infogain_.mutable_cpu_data());
  Set(1, kNaN, loss_.mutable_cpu_data());
  layer->Backward(top_, {true, false, false}, bottom_);
  const std::vector<float> expected{-1.5f, 0, 1.5f, 0, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(scores_.cpu_diff()[i], expected[i], 1e-6) << i;

  // Both items over 2 labels: 2 / 2 * the unscaled gradient.
  FillValues(&scores_, {0, kLn2, kLn3, kLn3, kLn2, 0});
  FillValues(&labels_, {0, 2});
  FillValues(&infogain_, {1, 0.5f, 0, 0, 1, 0, 0.25f, 0, 2});
  auto both = MakeLayer(R"(type: "InfogainLoss" loss_weight: 2)");
  both->SetUp(bottom_, top_);
  both->Forward(bottom_, top_);
  both->Backward(top_, {true, false, false}, bottom_);
  const std::vector<float> all{-0.75f, 0, 0.75f, 0.875f, 0.75f, -1.625f};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(scores_.cpu_diff()[i], all[i], 1e-6) << i;
}

TEST_F(InfogainLossLayerTest, Gradient) {
  struct Case {
    std::vector<int64_t> scores;
    int64_t classes;
    std::vector<int64_t> labels;
    const char* text;
  };
  for (const Case& c : std::vector<Case>{
           {{4, 5}, 5, {4}, R"(type: "InfogainLoss")"},
           {{2, 3, 2, 2},
            3,
            {2, 2, 2},
            R"(type: "InfogainLoss" loss_param { normalization: FULL })"},
           {{2, 4, 3}, 3, {2, 4}, R"(type: "InfogainLoss" infogain_loss_param { axis: -1 })"},
           {{1, 13}, 13, {1}, R"(type: "InfogainLoss" loss_weight: 3)"},
           {{127, 2}, 2, {127, 1}, R"(type: "InfogainLoss" loss_param { ignore_label: 1 })"}}) {
    SCOPED_TRACE(c.text);
    Blob scores(c.scores);
    FillGaussian(&scores, 421, 1.5f);
    Blob labels(c.labels);
    for (int64_t i = 0; i < labels.count(); ++i) {
      labels.mutable_cpu_data()[i] = static_cast<float>(i * 7 % c.classes);
    }
    Blob infogain({c.classes, c.classes});
    FillUniform(&infogain, 422, 0.0f, 1.0f);
    std::vector<Blob*> bottom{&scores, &labels, &infogain};
    auto layer = MakeLayer(c.text);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top_, 0);
  }
}

TEST_F(InfogainLossLayerTest, SetUpErrorsNameTheLayer) {
  std::vector<Blob*> two{&scores_, &labels_};
  auto no_source = MakeLayer(R"(name: "info" type: "InfogainLoss")");
  ExpectErrorContaining(
      [&] { no_source->SetUp(two, top_); },
      {"InfogainLoss layer 'info'",
       "needs infogain_loss_param.source or the infogain matrix as a third bottom"});
  auto missing = MakeLayer(
      R"(name: "info" type: "InfogainLoss" infogain_loss_param { source: "/nonexistent/h.binaryproto" })");
  ExpectErrorContaining([&] { missing->SetUp(two, top_); },
                        {"InfogainLoss layer 'info'", "/nonexistent/h.binaryproto"});
  Blob small({2, 2});
  std::vector<Blob*> bad_matrix{&scores_, &labels_, &small};
  auto layer = MakeLayer(R"(name: "info" type: "InfogainLoss")");
  ExpectErrorContaining([&] { layer->SetUp(bad_matrix, top_); },
                        {"InfogainLoss layer 'info'", "infogain matrix of shape 2 2 (4)",
                         "needs 3 x 3 values", "scores 2 3 (6)"});
  Blob labels({3});
  std::vector<Blob*> bad_labels{&scores_, &labels, &infogain_};
  ExpectErrorContaining([&] { layer->SetUp(bad_labels, top_); },
                        {"InfogainLoss layer 'info'", "need 2 labels", "3 (3)"});
  auto axis = MakeLayer(R"(name: "info" type: "InfogainLoss" infogain_loss_param { axis: 2 })");
  ExpectErrorContaining([&] { axis->SetUp(bottom_, top_); },
                        {"InfogainLoss layer 'info'", "infogain_loss_param.axis 2 is out of range",
                         "scores 2 3 (6)"});
}

TEST_F(InfogainLossLayerTest, LabelAndBackwardErrorsNameTheLayer) {
  auto layer = MakeLayer(R"(name: "info" type: "InfogainLoss")");
  layer->SetUp(bottom_, top_);
  labels_.mutable_cpu_data()[1] = 3;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                        {"InfogainLoss layer 'info'", "label 3 at index 1", "[0, 3)"});
  labels_.mutable_cpu_data()[1] = 0.5f;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                        {"InfogainLoss layer 'info'", "label 0.5 at index 1"});
  labels_.mutable_cpu_data()[1] = 2;
  layer->Forward(bottom_, top_);
  ExpectErrorContaining(
      [&] {
        layer->Backward(top_, {true, true, false}, bottom_);
      },
      {"InfogainLoss layer 'info'", "cannot backpropagate to labels"});
  ExpectErrorContaining(
      [&] {
        layer->Backward(top_, {true, false, true}, bottom_);
      },
      {"InfogainLoss layer 'info'", "cannot backpropagate to the infogain matrix"});
}

}  // namespace
}  // namespace demi
