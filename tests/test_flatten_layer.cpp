#include <gtest/gtest.h>

#include "demi/layers/flatten_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class FlattenLayerTest : public ::testing::Test {
 protected:
  FlattenLayerTest() : bottom_({2, 3, 4, 5}) { FillGaussian(&bottom_, 21); }
  std::vector<int64_t> TopShape(const std::string& text) {
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_vec_, top_vec_);
    return top_.shape();
  }
  Blob bottom_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&bottom_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(FlattenLayerTest, ShapesFollowAxisAndEndAxis) {
  EXPECT_EQ(TopShape(R"(type: "Flatten")"), (std::vector<int64_t>{2, 60}));
  EXPECT_EQ(TopShape(R"(type: "Flatten" flatten_param { axis: 0 })"), (std::vector<int64_t>{120}));
  EXPECT_EQ(TopShape(R"(type: "Flatten" flatten_param { axis: 1 end_axis: 2 })"),
            (std::vector<int64_t>{2, 12, 5}));
  EXPECT_EQ(TopShape(R"(type: "Flatten" flatten_param { axis: -3 end_axis: -2 })"),
            (std::vector<int64_t>{2, 12, 5}));
  EXPECT_EQ(TopShape(R"(type: "Flatten" flatten_param { axis: 2 end_axis: 2 })"),
            (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(TopShape(R"(type: "Flatten" flatten_param { axis: -2 })"),
            (std::vector<int64_t>{2, 3, 20}));
}

TEST_F(FlattenLayerTest, OddShapes) {
  bottom_.Reshape({1, 13, 1, 127});
  EXPECT_EQ(TopShape(R"(type: "Flatten")"), (std::vector<int64_t>{1, 1651}));
  bottom_.Reshape({13});
  EXPECT_EQ(TopShape(R"(type: "Flatten" flatten_param { axis: 0 })"), (std::vector<int64_t>{13}));
}

TEST_F(FlattenLayerTest, TopSharesDataAndDiff) {
  auto layer = MakeLayer(R"(type: "Flatten")");
  layer->SetUp(bottom_vec_, top_vec_);
  const std::vector<float> before = DataOf(bottom_);
  layer->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.data(), bottom_.data());
  EXPECT_EQ(top_.diff(), bottom_.diff());
  EXPECT_EQ(DataOf(top_), before);
  // Row-major order is kept: top (n, c*20 + h*5 + w) is bottom (n, c, h, w).
  EXPECT_EQ(top_.cpu_data()[1 * 60 + 2 * 20 + 3 * 5 + 4], bottom_.data_at(1, 2, 3, 4));
  FillGaussian(&top_, 22);
  std::copy(top_.cpu_data(), top_.cpu_data() + top_.count(), top_.mutable_cpu_diff());
  const std::vector<float> dy = DiffOf(top_);
  layer->Backward(top_vec_, {true}, bottom_vec_);
  EXPECT_EQ(DiffOf(bottom_), dy);
}

TEST_F(FlattenLayerTest, ReshapeFollowsANewBottomShape) {
  auto layer = MakeLayer(R"(type: "Flatten")");
  layer->SetUp(bottom_vec_, top_vec_);
  bottom_.Reshape({7, 2, 3});
  layer->Reshape(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{7, 6}));
  EXPECT_EQ(top_.data(), bottom_.data());
}

TEST_F(FlattenLayerTest, DeclaresNoBackwardReads) {
  auto layer = MakeLayer(R"(type: "Flatten")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
}

TEST_F(FlattenLayerTest, Gradient) {
  bottom_.Reshape({2, 3, 1, 2});
  FillGaussian(&bottom_, 23);
  auto layer = MakeLayer(R"(type: "Flatten" flatten_param { axis: -3 })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(FlattenLayerTest, Errors) {
  auto in_place = MakeLayer(R"(name: "flat" type: "Flatten")");
  ExpectErrorContaining([&] { in_place->SetUp(bottom_vec_, bottom_vec_); },
                        {"Flatten layer 'flat'", "in place"});
  auto bad_axis = MakeLayer(R"(name: "flat" type: "Flatten" flatten_param { axis: 4 })");
  ExpectErrorContaining([&] { bad_axis->SetUp(bottom_vec_, top_vec_); },
                        {"'flat'", "flatten_param.axis 4", "out of range", "2 3 4 5 (120)"});
  auto bad_end = MakeLayer(R"(name: "flat" type: "Flatten" flatten_param { end_axis: -5 })");
  ExpectErrorContaining([&] { bad_end->SetUp(bottom_vec_, top_vec_); },
                        {"'flat'", "flatten_param.end_axis -5", "2 3 4 5 (120)"});
  auto reversed =
      MakeLayer(R"(name: "flat" type: "Flatten" flatten_param { axis: 2 end_axis: 1 })");
  ExpectErrorContaining([&] { reversed->SetUp(bottom_vec_, top_vec_); },
                        {"'flat'", "axis 2 comes after end_axis 1", "2 3 4 5 (120)"});
}

}  // namespace
}  // namespace demi
