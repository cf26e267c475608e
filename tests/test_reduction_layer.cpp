#include <gtest/gtest.h>

#include <limits>

#include "demi/layers/reduction_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

class ReductionLayerTest : public ::testing::Test {
 protected:
  ReductionLayerTest() : x_({2, 3}) { FillValues(&x_, {1, -2, 3, -4, 5, 6}); }

  std::vector<float> ForwardOf(const std::string& text) {
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_, top_);
    layer->Forward(bottom_, top_);
    return DataOf(y_);
  }

  /// Backward with dy = [1, -3] over axis 1, with the data the layer claims
  /// not to read overwritten by NaN.
  std::vector<float> BackwardOf(const std::string& text) {
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_, top_);
    layer->Forward(bottom_, top_);
    EXPECT_FALSE(layer->BackwardReadsTopData(0));
    Set(y_.count(), kNaN, y_.mutable_cpu_data());
    Blob saved({2, 3});
    saved.CopyFrom(x_);
    if (!layer->BackwardReadsBottomData(0)) Set(x_.count(), kNaN, x_.mutable_cpu_data());
    std::copy_n(std::vector<float>{1, -3}.begin(), 2, y_.mutable_cpu_diff());
    layer->Backward(top_, {true}, bottom_);
    x_.CopyFrom(saved);
    return DiffOf(x_);
  }

  Blob x_;
  Blob y_;
  std::vector<Blob*> bottom_{&x_};
  std::vector<Blob*> top_{&y_};
};

TEST_F(ReductionLayerTest, ForwardEachOperation) {
  EXPECT_EQ(ForwardOf(R"(type: "Reduction")"), (std::vector<float>{9}));
  EXPECT_EQ(y_.num_axes(), 0);
  EXPECT_EQ(ForwardOf(R"(type: "Reduction" reduction_param { axis: 1 })"),
            (std::vector<float>{2, 7}));
  EXPECT_EQ(y_.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(ForwardOf(R"(type: "Reduction" reduction_param { axis: 1 operation: ASUM })"),
            (std::vector<float>{6, 15}));
  EXPECT_EQ(ForwardOf(R"(type: "Reduction" reduction_param { axis: 1 operation: SUMSQ })"),
            (std::vector<float>{14, 77}));
  const std::vector<float> mean =
      ForwardOf(R"(type: "Reduction" reduction_param { axis: -1 operation: MEAN })");
  EXPECT_FLOAT_EQ(mean[0], 2.0f / 3);
  EXPECT_FLOAT_EQ(mean[1], 7.0f / 3);
  EXPECT_EQ(ForwardOf(R"(type: "Reduction" reduction_param { axis: 1 coeff: -2 })"),
            (std::vector<float>{-4, -14}));
  EXPECT_EQ(ForwardOf(R"(type: "Reduction" reduction_param { operation: SUMSQ coeff: 0.5 })"),
            (std::vector<float>{45.5f}));
}

TEST_F(ReductionLayerTest, BackwardEachOperation) {
  for (const char* op : {"SUM", "MEAN"}) {
    auto layer =
        MakeLayer(std::string(R"(type: "Reduction" reduction_param { operation: )") + op + " }");
    EXPECT_FALSE(layer->BackwardReadsBottomData(0)) << op;
  }
  for (const char* op : {"ASUM", "SUMSQ"}) {
    auto layer =
        MakeLayer(std::string(R"(type: "Reduction" reduction_param { operation: )") + op + " }");
    EXPECT_TRUE(layer->BackwardReadsBottomData(0)) << op;
  }
  EXPECT_EQ(BackwardOf(R"(type: "Reduction" reduction_param { axis: 1 coeff: 2 })"),
            (std::vector<float>{2, 2, 2, -6, -6, -6}));
  const std::vector<float> mean =
      BackwardOf(R"(type: "Reduction" reduction_param { axis: 1 coeff: 2 operation: MEAN })");
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(mean[i], 2.0f / 3);
  for (int i = 3; i < 6; ++i) EXPECT_FLOAT_EQ(mean[i], -2.0f);
  EXPECT_EQ(BackwardOf(R"(type: "Reduction" reduction_param { axis: 1 coeff: 2 operation: ASUM })"),
            (std::vector<float>{2, -2, 2, 6, -6, -6}));
  EXPECT_EQ(
      BackwardOf(R"(type: "Reduction" reduction_param { axis: 1 coeff: 2 operation: SUMSQ })"),
      (std::vector<float>{4, -8, 12, 48, -60, -72}));
}

TEST_F(ReductionLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {13}, {1, 127}, {127, 1}, {1}}) {
    for (const char* op : {"SUM", "ASUM", "SUMSQ", "MEAN"}) {
      for (int axis = -1; axis < static_cast<int>(shape.size()); ++axis) {
        const std::string text = std::string(R"(type: "Reduction" reduction_param { operation: )") +
                                 op + " axis: " + std::to_string(axis) + " coeff: 0.7 }";
        SCOPED_TRACE(ShapeString(shape) + text);
        Blob x(shape);
        FillGaussian(&x, 331, 0.5f);
        Blob y;
        std::vector<Blob*> bottom{&x}, top{&y};
        auto layer = MakeLayer(text);
        GradientChecker checker(1e-2f, 1e-3f, 1701, 0.0f, 0.02f);  // ASUM's kink at 0
        checker.CheckGradient(layer.get(), bottom, top);
      }
    }
  }
}

TEST_F(ReductionLayerTest, AxisOutOfRangeIsAnError) {
  auto layer = MakeLayer(R"(name: "sum" type: "Reduction" reduction_param { axis: -3 })");
  ExpectErrorContaining(
      [&] { layer->SetUp(bottom_, top_); },
      {"Reduction layer 'sum'", "reduction_param.axis -3 is out of range", "2 3 (6)"});
}

}  // namespace
}  // namespace demi
