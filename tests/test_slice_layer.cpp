#include <gtest/gtest.h>

#include "demi/layers/slice_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class SliceLayerTest : public ::testing::Test {
 protected:
  SliceLayerTest() : bottom_({2, 3, 2}) {
    FillValues(&bottom_, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  }
  Blob bottom_;
  Blob t0_, t1_, t2_;
  std::vector<Blob*> bottom_vec_{&bottom_};
  std::vector<Blob*> two_{&t0_, &t1_};
  std::vector<Blob*> three_{&t0_, &t1_, &t2_};
};

TEST_F(SliceLayerTest, ForwardAtSlicePointsByHand) {
  auto layer = MakeLayer(R"(type: "Slice" slice_param { slice_point: 1 })");
  layer->SetUp(bottom_vec_, two_);
  layer->Forward(bottom_vec_, two_);
  EXPECT_EQ(t0_.shape(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(t1_.shape(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(DataOf(t0_), (std::vector<float>{0, 1, 6, 7}));
  EXPECT_EQ(DataOf(t1_), (std::vector<float>{2, 3, 4, 5, 8, 9, 10, 11}));
}

TEST_F(SliceLayerTest, EqualSplitAndOtherAxesByHand) {
  auto equal = MakeLayer(R"(type: "Slice")");
  equal->SetUp(bottom_vec_, three_);
  equal->Forward(bottom_vec_, three_);
  EXPECT_EQ(DataOf(t0_), (std::vector<float>{0, 1, 6, 7}));
  EXPECT_EQ(DataOf(t1_), (std::vector<float>{2, 3, 8, 9}));
  EXPECT_EQ(DataOf(t2_), (std::vector<float>{4, 5, 10, 11}));

  auto first = MakeLayer(R"(type: "Slice" slice_param { axis: 0 })");
  first->SetUp(bottom_vec_, two_);
  first->Forward(bottom_vec_, two_);
  EXPECT_EQ(t0_.shape(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(DataOf(t1_), (std::vector<float>{6, 7, 8, 9, 10, 11}));

  for (const char* text : {R"(type: "Slice" slice_param { axis: -1 })",
                           R"(type: "Slice" slice_param { slice_dim: 2 })"}) {
    auto last = MakeLayer(text);
    last->SetUp(bottom_vec_, two_);
    last->Forward(bottom_vec_, two_);
    EXPECT_EQ(t0_.shape(), (std::vector<int64_t>{2, 3, 1}));
    EXPECT_EQ(DataOf(t0_), (std::vector<float>{0, 2, 4, 6, 8, 10}));
    EXPECT_EQ(DataOf(t1_), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  }
}

TEST_F(SliceLayerTest, BackwardConcatenatesTheGradients) {
  auto layer = MakeLayer(R"(type: "Slice" slice_param { slice_point: 1 })");
  layer->SetUp(bottom_vec_, two_);
  layer->Forward(bottom_vec_, two_);
  FillValues(&t0_, {-1, -2, -3, -4});
  std::copy(t0_.cpu_data(), t0_.cpu_data() + 4, t0_.mutable_cpu_diff());
  FillValues(&t1_, {20, 21, 22, 23, 24, 25, 26, 27});
  std::copy(t1_.cpu_data(), t1_.cpu_data() + 8, t1_.mutable_cpu_diff());
  layer->Backward(two_, {true}, bottom_vec_);
  EXPECT_EQ(DiffOf(bottom_), (std::vector<float>{-1, -2, 20, 21, 22, 23, -3, -4, 24, 25, 26, 27}));
}

TEST_F(SliceLayerTest, OneTopSharesDataAndDiff) {
  std::vector<Blob*> one{&t0_};
  auto layer = MakeLayer(R"(type: "Slice")");
  layer->SetUp(bottom_vec_, one);
  layer->Forward(bottom_vec_, one);
  EXPECT_EQ(t0_.data(), bottom_.data());
  EXPECT_EQ(t0_.diff(), bottom_.diff());
  EXPECT_EQ(t0_.shape(), bottom_.shape());
}

TEST_F(SliceLayerTest, RoundTripWithConcatOnOddShapes) {
  // (1, 13) cut at 1 and 12 along -1, then joined back.
  Blob x({1, 13});
  FillGaussian(&x, 51);
  std::vector<Blob*> bottom{&x};
  auto slice =
      MakeLayer(R"(type: "Slice" slice_param { axis: -1 slice_point: 1 slice_point: 12 })");
  slice->SetUp(bottom, three_);
  slice->Forward(bottom, three_);
  EXPECT_EQ(t0_.shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(t1_.shape(), (std::vector<int64_t>{1, 11}));
  EXPECT_EQ(t2_.shape(), (std::vector<int64_t>{1, 1}));
  Blob joined;
  std::vector<Blob*> joined_vec{&joined};
  auto concat = MakeLayer(R"(type: "Concat" concat_param { axis: -1 })");
  concat->SetUp(three_, joined_vec);
  concat->Forward(three_, joined_vec);
  EXPECT_EQ(DataOf(joined), DataOf(x));

  // (13, 1, 3) cut equally along axis -3 into 13 single images.
  Blob images({13, 1, 3});
  FillGaussian(&images, 52);
  std::vector<Blob> pieces(13);
  std::vector<Blob*> piece_vec;
  for (Blob& piece : pieces) piece_vec.push_back(&piece);
  std::vector<Blob*> images_vec{&images};
  auto per_image = MakeLayer(R"(type: "Slice" slice_param { axis: -3 })");
  per_image->SetUp(images_vec, piece_vec);
  per_image->Forward(images_vec, piece_vec);
  EXPECT_EQ(pieces[12].shape(), (std::vector<int64_t>{1, 1, 3}));
  auto back = MakeLayer(R"(type: "Concat" concat_param { axis: 0 })");
  back->SetUp(piece_vec, joined_vec);
  back->Forward(piece_vec, joined_vec);
  EXPECT_EQ(DataOf(joined), DataOf(images));
}

TEST_F(SliceLayerTest, DeclaresNoBackwardReads) {
  auto layer = MakeLayer(R"(type: "Slice")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(1));
}

TEST_F(SliceLayerTest, Gradient) {
  Blob x({2, 5, 2, 3});
  FillGaussian(&x, 53);
  std::vector<Blob*> bottom{&x};
  auto channels = MakeLayer(R"(type: "Slice" slice_param { slice_point: 1 slice_point: 3 })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(channels.get(), bottom, three_);
  auto width = MakeLayer(R"(type: "Slice" slice_param { axis: -1 })");
  checker.CheckGradient(width.get(), bottom, three_);
}

TEST_F(SliceLayerTest, GradientOddShape) {
  Blob x({1, 13});
  FillGaussian(&x, 54);
  std::vector<Blob*> bottom{&x};
  auto layer = MakeLayer(R"(type: "Slice" slice_param { axis: 1 slice_point: 6 })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom, two_);
}

TEST_F(SliceLayerTest, Errors) {
  const std::string shape = "2 3 2 (12)";
  auto both = MakeLayer(R"(name: "cut" type: "Slice" slice_param { axis: 1 slice_dim: 1 })");
  ExpectErrorContaining([&] { both->SetUp(bottom_vec_, two_); },
                        {"Slice layer 'cut'", "both slice_param.axis and the legacy slice_dim"});
  auto count = MakeLayer(R"(name: "cut" type: "Slice" slice_param { slice_point: 1 })");
  ExpectErrorContaining([&] { count->SetUp(bottom_vec_, three_); },
                        {"'cut'", "1 slice_point values for 3 tops", "needs 2"});
  auto uneven = MakeLayer(R"(name: "cut" type: "Slice")");
  ExpectErrorContaining([&] { uneven->SetUp(bottom_vec_, two_); },
                        {"'cut'", "2 tops do not evenly divide axis 1", shape});
  auto decreasing =
      MakeLayer(R"(name: "cut" type: "Slice" slice_param { slice_point: 2 slice_point: 2 })");
  ExpectErrorContaining([&] { decreasing->SetUp(bottom_vec_, three_); },
                        {"'cut'", "slice_point 1 = 2", "previous cut 2", shape});
  auto zero = MakeLayer(R"(name: "cut" type: "Slice" slice_param { slice_point: 0 })");
  ExpectErrorContaining([&] { zero->SetUp(bottom_vec_, two_); }, {"'cut'", "slice_point 0 = 0"});
  auto past = MakeLayer(R"(name: "cut" type: "Slice" slice_param { slice_point: 4 })");
  ExpectErrorContaining([&] { past->SetUp(bottom_vec_, two_); },
                        {"'cut'", "slice_point 0 = 4", "not pass 3", shape});
  auto bad_axis = MakeLayer(R"(name: "cut" type: "Slice" slice_param { axis: 3 })");
  ExpectErrorContaining([&] { bad_axis->SetUp(bottom_vec_, two_); },
                        {"'cut'", "slice_param.axis 3", "out of range", shape});
  auto bad_dim = MakeLayer(R"(name: "cut" type: "Slice" slice_param { slice_dim: 5 })");
  ExpectErrorContaining([&] { bad_dim->SetUp(bottom_vec_, two_); },
                        {"'cut'", "slice_param.slice_dim 5", shape});
  std::vector<Blob*> in_place{&t0_, &bottom_};
  ExpectErrorContaining([&] { uneven->SetUp(bottom_vec_, in_place); },
                        {"Slice layer 'cut'", "in place"});
}

}  // namespace
}  // namespace demi
