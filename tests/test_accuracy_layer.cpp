#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "demi/layers/accuracy_layer.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Five samples, three classes; a label's rank is the number of classes with a
/// strictly greater score:
///   [0.1, 0.7, 0.2] label 1: rank 0 (top-1 and top-2 hit)
///   [0.5, 0.3, 0.2] label 2: rank 2 (miss)
///   [0.2, 0.5, 0.3] label 2: rank 1 (top-2 hit only)
///   [0.4, 0.4, 0.2] label 1: rank 0, the tie with class 0 does not count against it
///   [0.9, 0.05, 0.05] label -1: ignored where asked
class AccuracyLayerTest : public ::testing::Test {
 protected:
  AccuracyLayerTest() : scores_({5, 3}), labels_({5}) {
    FillValues(&scores_, {0.1f, 0.7f, 0.2f, 0.5f, 0.3f, 0.2f, 0.2f, 0.5f, 0.3f, 0.4f, 0.4f, 0.2f,
                          0.9f, 0.05f, 0.05f});
    FillValues(&labels_, {1, 2, 2, 1, -1});
  }

  /// Runs the layer with one or two tops; returns the accuracy.
  float Run(const std::string& text, bool per_class = false) {
    auto layer = MakeLayer(text);
    std::vector<Blob*> top{&accuracy_};
    if (per_class) top.push_back(&per_class_);
    layer->SetUp(bottom_, top);
    layer->Forward(bottom_, top);
    EXPECT_EQ(accuracy_.count(), 1);
    return accuracy_.cpu_data()[0];
  }

  Blob scores_;
  Blob labels_;
  Blob accuracy_;
  Blob per_class_;
  std::vector<Blob*> bottom_{&scores_, &labels_};
};

TEST_F(AccuracyLayerTest, TopOneAndTopTwoWithIgnoredLabel) {
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy" accuracy_param { ignore_label: -1 })"), 0.5f);
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy" accuracy_param { ignore_label: -1 top_k: 2 })"), 0.75f);
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy" accuracy_param { ignore_label: -1 top_k: 3 })"), 1.0f);
  // Ignoring label 2 instead leaves samples 0, 3 (hits) and 4 (now label 0, a hit).
  labels_.mutable_cpu_data()[4] = 0;
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy")"), 0.6f);
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy" accuracy_param { ignore_label: 2 })"), 1.0f);
}

TEST_F(AccuracyLayerTest, PerClassAccuracy) {
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy" accuracy_param { ignore_label: -1 })", true), 0.5f);
  // Class 0 has no label, class 1 two hits of two, class 2 none of two.
  EXPECT_EQ(per_class_.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(DataOf(per_class_), (std::vector<float>{0.0f, 1.0f, 0.0f}));
  Run(R"(type: "Accuracy" accuracy_param { ignore_label: -1 top_k: 2 })", true);
  EXPECT_EQ(DataOf(per_class_), (std::vector<float>{0.0f, 1.0f, 0.5f}));
}

TEST_F(AccuracyLayerTest, AllIgnoredGivesZero) {
  FillValues(&labels_, {7, 7, 7, 7, 7});
  EXPECT_EQ(Run(R"(type: "Accuracy" accuracy_param { ignore_label: 7 })", true), 0.0f);
  EXPECT_EQ(DataOf(per_class_), (std::vector<float>{0.0f, 0.0f, 0.0f}));
}

TEST_F(AccuracyLayerTest, SpatialPositionsAndNegativeAxis) {
  // 1 x 3 x 2: position 0 scores [1, 2, 3] label 2 (hit); position 1 [3, 2, 1] label 1 (rank 1).
  scores_.Reshape({1, 3, 2});
  FillValues(&scores_, {1, 3, 2, 2, 3, 1});
  labels_.Reshape({1, 2});
  FillValues(&labels_, {2, 1});
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy")"), 0.5f);
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy" accuracy_param { top_k: 2 })"), 1.0f);
  // The same scores read with classes on the last axis: rows [1, 3], [2, 2], [3, 1].
  scores_.Reshape({1, 3, 2});
  labels_.Reshape({1, 3});
  FillValues(&labels_, {0, 1, 0});
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy" accuracy_param { axis: -1 })", true), 2.0f / 3);
  EXPECT_EQ(DataOf(per_class_), (std::vector<float>{0.5f, 1.0f}));
}

TEST_F(AccuracyLayerTest, OddShapesAgainstArgmaxAndArgmin) {
  scores_.Reshape({127, 13});
  FillGaussian(&scores_, 111);
  labels_.Reshape({127});
  auto label_rows_by = [&](auto pick) {
    for (int i = 0; i < 127; ++i) {
      const float* row = scores_.cpu_data() + i * 13;
      labels_.mutable_cpu_data()[i] = static_cast<float>(pick(row, row + 13) - row);
    }
  };
  label_rows_by([](const float* b, const float* e) { return std::max_element(b, e); });
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy")"), 1.0f);
  label_rows_by([](const float* b, const float* e) { return std::min_element(b, e); });
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy")"), 0.0f);
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy" accuracy_param { top_k: 12 })"), 0.0f);
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy" accuracy_param { top_k: 13 })"), 1.0f);

  scores_.Reshape({13, 1});
  FillGaussian(&scores_, 112);
  labels_.Reshape({13});
  FillValues(&labels_, std::vector<float>(13, 0.0f));
  EXPECT_FLOAT_EQ(Run(R"(type: "Accuracy")"), 1.0f);
}

TEST_F(AccuracyLayerTest, NotDifferentiable) {
  auto layer = MakeLayer(R"(name: "acc" type: "Accuracy" accuracy_param { ignore_label: -1 })");
  EXPECT_FALSE(layer->AllowForceBackward(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  std::vector<Blob*> top{&accuracy_};
  layer->SetUp(bottom_, top);
  layer->Forward(bottom_, top);
  Set(scores_.count(), 5.0f, scores_.mutable_cpu_diff());
  layer->Backward(top, {false, false}, bottom_);
  EXPECT_EQ(DiffOf(scores_), std::vector<float>(15, 5.0f));
  ExpectErrorContaining(
      [&] {
        layer->Backward(top, {true, false}, bottom_);
      },
      {"Accuracy layer 'acc'", "cannot backpropagate to bottom 0"});
}

TEST_F(AccuracyLayerTest, BadParametersAndShapesAreErrors) {
  std::vector<Blob*> top{&accuracy_};
  auto zero_k = MakeLayer(R"(name: "acc" type: "Accuracy" accuracy_param { top_k: 0 })");
  ExpectErrorContaining([&] { zero_k->SetUp(bottom_, top); }, {"Accuracy layer 'acc'", "top_k"});
  auto big_k = MakeLayer(R"(name: "acc" type: "Accuracy" accuracy_param { top_k: 4 })");
  ExpectErrorContaining([&] { big_k->SetUp(bottom_, top); },
                        {"Accuracy layer 'acc'", "top_k 4", "3 classes", "5 3 (15)"});
  auto bad_axis = MakeLayer(R"(name: "acc" type: "Accuracy" accuracy_param { axis: 2 })");
  ExpectErrorContaining([&] { bad_axis->SetUp(bottom_, top); },
                        {"Accuracy layer 'acc'", "accuracy_param.axis 2", "5 3 (15)"});
  auto layer = MakeLayer(R"(name: "acc" type: "Accuracy")");
  labels_.Reshape({4});
  ExpectErrorContaining([&] { layer->SetUp(bottom_, top); },
                        {"Accuracy layer 'acc'", "5 3 (15)", "4 (4)"});
}

TEST_F(AccuracyLayerTest, LabelOutOfRangeIsAnError) {
  auto layer = MakeLayer(R"(name: "acc" type: "Accuracy")");
  std::vector<Blob*> top{&accuracy_};
  layer->SetUp(bottom_, top);
  ExpectErrorContaining([&] { layer->Forward(bottom_, top); },
                        {"Accuracy layer 'acc'", "label -1", "index 4"});
  labels_.mutable_cpu_data()[1] = 3;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top); },
                        {"Accuracy layer 'acc'", "label 3", "index 1"});
  // A NaN label is no class (ClassLabel), never converted as one.
  labels_.mutable_cpu_data()[1] = std::numeric_limits<float>::quiet_NaN();
  ExpectErrorContaining([&] { layer->Forward(bottom_, top); },
                        {"label at index 1 is NaN, infinite or past int64's range"});
}

}  // namespace
}  // namespace demi
