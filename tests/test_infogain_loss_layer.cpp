#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <string>

#include "demi/layers/infogain_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kLn2 = std::log(2.0f);

/// Probabilities [[1/2, 1/4, 1/4], [1/4, 1/4, 1/2]], labels [0, 2] and
/// H = [[1, 0.5, 0], [0, 1, 0], [0.25, 0, 2]]:
///   item 0, row [1, 0.5, 0]: -(ln 1/2 + 0.5 ln 1/4) = 2 ln 2
///   item 1, row [0.25, 0, 2]: -(0.25 ln 1/4 + 2 ln 1/2) = 2.5 ln 2
class InfogainLossLayerTest : public ::testing::Test {
 protected:
  InfogainLossLayerTest() : prob_({2, 3}), labels_({2}), infogain_({3, 3}) {
    FillValues(&prob_, {0.5f, 0.25f, 0.25f, 0.25f, 0.25f, 0.5f});
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

  Blob prob_;
  Blob labels_;
  Blob infogain_;
  Blob loss_;
  std::vector<Blob*> bottom_{&prob_, &labels_, &infogain_};
  std::vector<Blob*> top_{&loss_};
};

TEST_F(InfogainLossLayerTest, ForwardWithTheMatrixAsABottomOrAFile) {
  auto layer = MakeLayer(R"(type: "InfogainLoss")");
  layer->SetUp(bottom_, top_);
  EXPECT_NEAR(layer->Forward(bottom_, top_), 2.25f * kLn2, 1e-6);  // 4.5 ln 2 over 2 labels

  const std::string path = WriteInfogainFile();
  std::vector<Blob*> two{&prob_, &labels_};
  auto from_file =
      MakeLayer(R"(type: "InfogainLoss" infogain_loss_param { source: ")" + path + R"(" })");
  from_file->SetUp(two, top_);
  EXPECT_NEAR(from_file->Forward(two, top_), 2.25f * kLn2, 1e-6);
  ::unlink(path.c_str());

  auto ignoring = MakeLayer(R"(type: "InfogainLoss" loss_param { ignore_label: 2 })");
  ignoring->SetUp(bottom_, top_);
  EXPECT_NEAR(ignoring->Forward(bottom_, top_), 2 * kLn2, 1e-6);
  auto none = MakeLayer(R"(type: "InfogainLoss" loss_param { normalization: NONE })");
  none->SetUp(bottom_, top_);
  EXPECT_NEAR(none->Forward(bottom_, top_), 4.5f * kLn2, 1e-5);
}

TEST_F(InfogainLossLayerTest, ClassAxisWithInnerPositions) {
  // The same two distributions as positions 0 and 1 of one 1 x 3 x 2 item.
  Blob prob({1, 3, 2});
  FillValues(&prob, {0.5f, 0.25f, 0.25f, 0.25f, 0.25f, 0.5f});
  Blob labels({1, 2});
  FillValues(&labels, {0, 2});
  std::vector<Blob*> bottom{&prob, &labels, &infogain_};
  auto layer = MakeLayer(R"(type: "InfogainLoss" infogain_loss_param { axis: 1 })");
  layer->SetUp(bottom, top_);
  EXPECT_NEAR(layer->Forward(bottom, top_), 2.25f * kLn2, 1e-6);
  layer->Backward(top_, {true, false, false}, bottom);
  const std::vector<float> expected{-1, -0.5f, -1, 0, 0, -2};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(prob.cpu_diff()[i], expected[i], 1e-6) << i;
}

TEST_F(InfogainLossLayerTest, ZeroProbabilityIsClamped) {
  FillValues(&prob_, {0, 0.5f, 0.5f, 0.25f, 0.25f, 0.5f});
  FillValues(&infogain_, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  auto layer = MakeLayer(R"(type: "InfogainLoss" loss_param { normalization: NONE })");
  layer->SetUp(bottom_, top_);
  // -ln(1e-20) + -ln(1/2)
  EXPECT_NEAR(layer->Forward(bottom_, top_), 20 * std::log(10.0f) + kLn2, 1e-4);
  layer->Backward(top_, {true, false, false}, bottom_);
  EXPECT_FLOAT_EQ(prob_.cpu_diff()[0], -1e20f);
  EXPECT_FLOAT_EQ(prob_.cpu_diff()[5], -2.0f);
}

TEST_F(InfogainLossLayerTest, BackwardMatchesHandComputedReadingTheBottoms) {
  auto layer = MakeLayer(R"(type: "InfogainLoss" loss_weight: 2 loss_param { ignore_label: 1 })");
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsBottomData(1));
  EXPECT_TRUE(layer->BackwardReadsBottomData(2));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_TRUE(layer->AllowForceBackward(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  EXPECT_FALSE(layer->AllowForceBackward(2));
  layer->SetUp(bottom_, top_);
  EXPECT_TRUE(layer->buffers().empty());
  layer->Forward(bottom_, top_);
  Set(1, std::numeric_limits<float>::quiet_NaN(), loss_.mutable_cpu_data());
  layer->Backward(top_, {true, false, false}, bottom_);
  // -w H[l, k] / p / 2 valid labels.
  const std::vector<float> expected{-2, -2, 0, -1, 0, -4};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(prob_.cpu_diff()[i], expected[i], 1e-6) << i;
  FillValues(&labels_, {1, 2});
  layer->Forward(bottom_, top_);
  layer->Backward(top_, {true, false, false}, bottom_);
  const std::vector<float> ignored{0, 0, 0, -2, 0, -8};  // one valid label
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(prob_.cpu_diff()[i], ignored[i], 1e-6) << i;
}

TEST_F(InfogainLossLayerTest, Gradient) {
  struct Case {
    std::vector<int64_t> prob;
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
    Blob prob(c.prob);
    FillUniform(&prob, 421, 0.1f, 1.0f);
    Blob labels(c.labels);
    for (int64_t i = 0; i < labels.count(); ++i) {
      labels.mutable_cpu_data()[i] = static_cast<float>(i * 7 % c.classes);
    }
    Blob infogain({c.classes, c.classes});
    FillUniform(&infogain, 422, 0.0f, 1.0f);
    std::vector<Blob*> bottom{&prob, &labels, &infogain};
    auto layer = MakeLayer(c.text);
    GradientChecker checker(1e-3f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top_, 0);
  }
}

TEST_F(InfogainLossLayerTest, SetUpErrorsNameTheLayer) {
  std::vector<Blob*> two{&prob_, &labels_};
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
  std::vector<Blob*> bad_matrix{&prob_, &labels_, &small};
  auto layer = MakeLayer(R"(name: "info" type: "InfogainLoss")");
  ExpectErrorContaining([&] { layer->SetUp(bad_matrix, top_); },
                        {"InfogainLoss layer 'info'", "infogain matrix of shape 2 2 (4)",
                         "needs 3 x 3 values", "2 3 (6)"});
  Blob labels({3});
  std::vector<Blob*> bad_labels{&prob_, &labels, &infogain_};
  ExpectErrorContaining([&] { layer->SetUp(bad_labels, top_); },
                        {"InfogainLoss layer 'info'", "need 2 labels", "3 (3)"});
  auto axis = MakeLayer(R"(name: "info" type: "InfogainLoss" infogain_loss_param { axis: 2 })");
  ExpectErrorContaining(
      [&] { axis->SetUp(bottom_, top_); },
      {"InfogainLoss layer 'info'", "infogain_loss_param.axis 2 is out of range", "2 3 (6)"});
}

TEST_F(InfogainLossLayerTest, LabelAndBackwardErrorsNameTheLayer) {
  auto layer = MakeLayer(R"(name: "info" type: "InfogainLoss")");
  layer->SetUp(bottom_, top_);
  labels_.mutable_cpu_data()[1] = 3;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                        {"InfogainLoss layer 'info'", "label 3 at index 1", "[0, 3)"});
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
