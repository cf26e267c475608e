#include <gtest/gtest.h>

#include "demi/layers/concat_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class ConcatLayerTest : public ::testing::Test {
 protected:
  ConcatLayerTest() : a_({2, 1, 2}), b_({2, 2, 2}) {
    FillValues(&a_, {1, 2, 3, 4});
    FillValues(&b_, {10, 11, 12, 13, 14, 15, 16, 17});
  }
  Blob a_, b_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&a_, &b_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(ConcatLayerTest, ForwardAlongChannelsByHand) {
  auto layer = MakeLayer(R"(type: "Concat")");
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  ASSERT_EQ(top_.shape(), (std::vector<int64_t>{2, 3, 2}));
  // Image 0: a's row (1 2), then b's rows (10 11) (12 13); image 1 likewise.
  EXPECT_EQ(DataOf(top_), (std::vector<float>{1, 2, 10, 11, 12, 13, 3, 4, 14, 15, 16, 17}));
}

TEST_F(ConcatLayerTest, ForwardAlongOtherAxesByHand) {
  Blob c({2, 1, 2});
  FillValues(&c, {5, 6, 7, 8});
  std::vector<Blob*> bottom{&a_, &c};
  auto first = MakeLayer(R"(type: "Concat" concat_param { axis: 0 })");
  first->SetUp(bottom, top_vec_);
  first->Forward(bottom, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{4, 1, 2}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  auto last = MakeLayer(R"(type: "Concat" concat_param { axis: -1 })");
  last->SetUp(bottom, top_vec_);
  last->Forward(bottom, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 1, 4}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8}));
  auto legacy = MakeLayer(R"(type: "Concat" concat_param { concat_dim: 2 })");
  legacy->SetUp(bottom, top_vec_);
  legacy->Forward(bottom, top_vec_);
  EXPECT_EQ(DataOf(top_), (std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8}));
}

TEST_F(ConcatLayerTest, BackwardSplitsTheGradient) {
  auto layer = MakeLayer(R"(type: "Concat")");
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  const std::vector<float> dy{-1, -2, 20, 21, 22, 23, -3, -4, 24, 25, 26, 27};
  std::copy(dy.begin(), dy.end(), top_.mutable_cpu_diff());
  layer->Backward(top_vec_, {true, true}, bottom_vec_);
  EXPECT_EQ(DiffOf(a_), (std::vector<float>{-1, -2, -3, -4}));
  EXPECT_EQ(DiffOf(b_), (std::vector<float>{20, 21, 22, 23, 24, 25, 26, 27}));
  // propagate_down false leaves a bottom's diff alone.
  Set(a_.count(), 9.0f, a_.mutable_cpu_diff());
  layer->Backward(top_vec_, {false, true}, bottom_vec_);
  EXPECT_EQ(DiffOf(a_), (std::vector<float>{9, 9, 9, 9}));
}

TEST_F(ConcatLayerTest, OneBottomSharesDataAndDiff) {
  std::vector<Blob*> bottom{&b_};
  auto layer = MakeLayer(R"(type: "Concat")");
  layer->SetUp(bottom, top_vec_);
  layer->Forward(bottom, top_vec_);
  EXPECT_EQ(top_.data(), b_.data());
  EXPECT_EQ(top_.diff(), b_.diff());
  EXPECT_EQ(top_.shape(), b_.shape());
}

TEST_F(ConcatLayerTest, RoundTripWithSliceOnOddShapes) {
  // (1, 13) pieces joined along -1 and cut back at the same points.
  Blob x({1, 4}), y({1, 1}), z({1, 8});
  FillGaussian(&x, 41);
  FillGaussian(&y, 42);
  FillGaussian(&z, 43);
  std::vector<Blob*> pieces{&x, &y, &z};
  auto concat = MakeLayer(R"(type: "Concat" concat_param { axis: -1 })");
  concat->SetUp(pieces, top_vec_);
  concat->Forward(pieces, top_vec_);
  ASSERT_EQ(top_.shape(), (std::vector<int64_t>{1, 13}));
  Blob x2, y2, z2;
  std::vector<Blob*> back{&x2, &y2, &z2};
  auto slice = MakeLayer(R"(type: "Slice" slice_param { axis: -1 slice_point: 4 slice_point: 5 })");
  slice->SetUp(top_vec_, back);
  slice->Forward(top_vec_, back);
  EXPECT_EQ(DataOf(x2), DataOf(x));
  EXPECT_EQ(DataOf(y2), DataOf(y));
  EXPECT_EQ(DataOf(z2), DataOf(z));

  // 4-D, along axis -3 (channels), 13 channels in all.
  Blob p({2, 6, 1, 3}), q({2, 7, 1, 3});
  FillGaussian(&p, 44);
  FillGaussian(&q, 45);
  std::vector<Blob*> two{&p, &q};
  auto concat4 = MakeLayer(R"(type: "Concat" concat_param { axis: -3 })");
  concat4->SetUp(two, top_vec_);
  concat4->Forward(two, top_vec_);
  ASSERT_EQ(top_.shape(), (std::vector<int64_t>{2, 13, 1, 3}));
  Blob p2, q2;
  std::vector<Blob*> back2{&p2, &q2};
  auto slice4 = MakeLayer(R"(type: "Slice" slice_param { axis: -3 slice_point: 6 })");
  slice4->SetUp(top_vec_, back2);
  slice4->Forward(top_vec_, back2);
  EXPECT_EQ(DataOf(p2), DataOf(p));
  EXPECT_EQ(DataOf(q2), DataOf(q));
}

TEST_F(ConcatLayerTest, DeclaresNoBackwardReads) {
  auto layer = MakeLayer(R"(type: "Concat")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
}

TEST_F(ConcatLayerTest, Gradient) {
  Blob x({2, 3, 1, 2}), y({2, 3, 1, 2}), z({2, 3, 4, 2});
  FillGaussian(&x, 46);
  FillGaussian(&y, 47);
  FillGaussian(&z, 48);
  std::vector<Blob*> two{&x, &y};
  auto channels = MakeLayer(R"(type: "Concat")");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(channels.get(), two, top_vec_);
  std::vector<Blob*> three{&x, &z, &y};
  auto height = MakeLayer(R"(type: "Concat" concat_param { axis: -2 })");
  checker.CheckGradient(height.get(), three, top_vec_);
}

TEST_F(ConcatLayerTest, GradientOddShapes) {
  Blob x({1, 13}), y({1, 1});
  FillGaussian(&x, 49);
  FillGaussian(&y, 50);
  std::vector<Blob*> bottom{&x, &y};
  auto layer = MakeLayer(R"(type: "Concat" concat_param { axis: -1 })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom, top_vec_);
}

TEST_F(ConcatLayerTest, Errors) {
  auto both = MakeLayer(R"(name: "cat" type: "Concat" concat_param { axis: 1 concat_dim: 1 })");
  ExpectErrorContaining([&] { both->SetUp(bottom_vec_, top_vec_); },
                        {"Concat layer 'cat'", "both concat_param.axis and the legacy concat_dim"});
  auto bad_axis = MakeLayer(R"(name: "cat" type: "Concat" concat_param { axis: -4 })");
  ExpectErrorContaining([&] { bad_axis->SetUp(bottom_vec_, top_vec_); },
                        {"'cat'", "concat_param.axis -4", "out of range", "2 1 2 (4)"});
  auto bad_dim = MakeLayer(R"(name: "cat" type: "Concat" concat_param { concat_dim: 3 })");
  ExpectErrorContaining([&] { bad_dim->SetUp(bottom_vec_, top_vec_); },
                        {"'cat'", "concat_param.concat_dim 3", "2 1 2 (4)"});

  Blob c({2, 1, 3});
  std::vector<Blob*> mismatch{&a_, &b_, &c};
  auto layer = MakeLayer(R"(name: "cat" type: "Concat")");
  ExpectErrorContaining([&] { layer->SetUp(mismatch, top_vec_); },
                        {"Concat layer 'cat'", "bottom 2 of shape 2 1 3 (6)",
                         "bottom 0 of shape 2 1 2 (4)", "concat axis 1"});
  Blob d({2, 1, 2, 1});
  std::vector<Blob*> more_axes{&a_, &d};
  ExpectErrorContaining([&] { layer->SetUp(more_axes, top_vec_); },
                        {"'cat'", "bottom 1 of shape 2 1 2 1 (4)", "bottom 0 of shape 2 1 2 (4)"});
  std::vector<Blob*> in_place{&a_};
  ExpectErrorContaining([&] { layer->SetUp(in_place, in_place); },
                        {"Concat layer 'cat'", "in place"});
}

}  // namespace
}  // namespace demi
