#include <gtest/gtest.h>

#include "demi/layers/reshape_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class ReshapeLayerTest : public ::testing::Test {
 protected:
  ReshapeLayerTest() : bottom_({2, 3, 6, 5}) { FillGaussian(&bottom_, 31); }
  std::vector<int64_t> TopShape(const std::string& reshape_param) {
    auto layer = MakeLayer(R"(name: "r" type: "Reshape" reshape_param { )" + reshape_param + " }");
    layer->SetUp(bottom_vec_, top_vec_);
    return top_.shape();
  }
  Blob bottom_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&bottom_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(ReshapeLayerTest, ExplicitCopiedAndInferredDimensions) {
  EXPECT_EQ(TopShape("shape { dim: 6 dim: 2 dim: 3 dim: 5 }"), (std::vector<int64_t>{6, 2, 3, 5}));
  EXPECT_EQ(TopShape("shape { dim: 0 dim: -1 }"), (std::vector<int64_t>{2, 90}));
  EXPECT_EQ(TopShape("shape { dim: -1 dim: 0 dim: 2 }"), (std::vector<int64_t>{30, 3, 2}));
  EXPECT_EQ(TopShape("shape { dim: 0 dim: 0 dim: 0 dim: 0 }"), (std::vector<int64_t>{2, 3, 6, 5}));
  EXPECT_EQ(TopShape("shape { dim: 180 }"), (std::vector<int64_t>{180}));
}

TEST_F(ReshapeLayerTest, AxisAndNumAxesSelectThePartReplaced) {
  // Replace axes 1 and 2 (3 x 6) with one inferred axis.
  EXPECT_EQ(TopShape("axis: 1 num_axes: 2 shape { dim: -1 }"), (std::vector<int64_t>{2, 18, 5}));
  // Insert a leading axis, or append one (-1 is the position after the last).
  EXPECT_EQ(TopShape("axis: 0 num_axes: 0 shape { dim: 1 }"),
            (std::vector<int64_t>{1, 2, 3, 6, 5}));
  EXPECT_EQ(TopShape("axis: -1 num_axes: 0 shape { dim: 1 }"),
            (std::vector<int64_t>{2, 3, 6, 5, 1}));
  // axis -3 starts at axis 2: (6, 5) becomes (10, 3).
  EXPECT_EQ(TopShape("axis: -3 shape { dim: 10 dim: -1 }"), (std::vector<int64_t>{2, 3, 10, 3}));
  // A 0 copies the bottom axis at axis + its position: axis 1 + 0 -> 3.
  EXPECT_EQ(TopShape("axis: 1 shape { dim: 0 dim: -1 }"), (std::vector<int64_t>{2, 3, 30}));
  // Empty shape with num_axes 1 on a size-1 axis drops it.
  bottom_.Reshape({4, 1, 13});
  EXPECT_EQ(TopShape("axis: 1 num_axes: 1 shape { }"), (std::vector<int64_t>{4, 13}));
}

TEST_F(ReshapeLayerTest, TopSharesDataAndDiffAndKeepsOrder) {
  auto layer = MakeLayer(R"(type: "Reshape" reshape_param { shape { dim: 0 dim: -1 } })");
  layer->SetUp(bottom_vec_, top_vec_);
  const std::vector<float> before = DataOf(bottom_);
  layer->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.data(), bottom_.data());
  EXPECT_EQ(top_.diff(), bottom_.diff());
  EXPECT_EQ(DataOf(top_), before);
  EXPECT_EQ(top_.cpu_data()[1 * 90 + 2 * 30 + 4 * 5 + 3], bottom_.data_at(1, 2, 4, 3));
  FillGaussian(&top_, 32);
  std::copy(top_.cpu_data(), top_.cpu_data() + top_.count(), top_.mutable_cpu_diff());
  const std::vector<float> dy = DiffOf(top_);
  layer->Backward(top_vec_, {true}, bottom_vec_);
  EXPECT_EQ(DiffOf(bottom_), dy);
}

TEST_F(ReshapeLayerTest, ReshapeInfersAgainForANewBatch) {
  auto layer = MakeLayer(R"(type: "Reshape" reshape_param { shape { dim: 0 dim: -1 } })");
  layer->SetUp(bottom_vec_, top_vec_);
  bottom_.Reshape({1, 13, 1, 127});
  layer->Reshape(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1651}));
  EXPECT_EQ(top_.data(), bottom_.data());
}

TEST_F(ReshapeLayerTest, DeclaresNoBackwardReads) {
  auto layer = MakeLayer(R"(type: "Reshape" reshape_param { shape { dim: -1 } })");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
}

TEST_F(ReshapeLayerTest, Gradient) {
  bottom_.Reshape({2, 3, 2});
  FillGaussian(&bottom_, 33);
  auto layer = MakeLayer(R"(type: "Reshape" reshape_param { shape { dim: 3 dim: -1 } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(ReshapeLayerTest, Errors) {
  const std::string shape = "2 3 6 5 (180)";
  ExpectErrorContaining([&] { TopShape("shape { dim: -1 dim: 3 dim: -1 }"); },
                        {"Reshape layer 'r'", "[-1 3 -1]", "more than one -1"});
  ExpectErrorContaining([&] { TopShape("shape { dim: 7 dim: 0 }"); },
                        {"'r'", "top shape 7 3 (21)", shape, "differ in count"});
  ExpectErrorContaining([&] { TopShape("shape { dim: 2 dim: -2 }"); },
                        {"'r'", "[2 -2]", "dimension -2"});
  ExpectErrorContaining([&] { TopShape("shape { dim: 0 dim: 0 dim: 0 dim: 0 dim: 0 }"); },
                        {"'r'", "has a 0 at position 4", shape, "no axis 4"});
  ExpectErrorContaining([&] { TopShape("shape { dim: 0 dim: 7 dim: -1 }"); },
                        {"'r'", "cannot infer", "[0 7 -1]", shape, "product 14"});
  ExpectErrorContaining([&] { TopShape("axis: 5 shape { dim: 1 }"); },
                        {"'r'", "reshape_param.axis 5", "out of range", shape});
  ExpectErrorContaining([&] { TopShape("axis: -6 shape { dim: 1 }"); },
                        {"'r'", "reshape_param.axis -6", shape});
  ExpectErrorContaining([&] { TopShape("num_axes: -2 shape { dim: 1 }"); },
                        {"'r'", "reshape_param.num_axes -2"});
  ExpectErrorContaining([&] { TopShape("axis: 3 num_axes: 2 shape { dim: -1 }"); },
                        {"'r'", "axis 3 + num_axes 2", "past the end", shape});
  auto layer = MakeLayer(R"(name: "r" type: "Reshape" reshape_param { shape { dim: -1 } })");
  ExpectErrorContaining([&] { layer->SetUp(bottom_vec_, bottom_vec_); },
                        {"Reshape layer 'r'", "in place"});
}

}  // namespace
}  // namespace demi
