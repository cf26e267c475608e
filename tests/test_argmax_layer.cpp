#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "demi/layers/argmax_layer.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class ArgMaxLayerTest : public ::testing::Test {
 protected:
  std::vector<float> ForwardOf(const std::string& text) {
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_, top_);
    layer->Forward(bottom_, top_);
    return DataOf(y_);
  }

  Blob x_;
  Blob y_;
  std::vector<Blob*> bottom_{&x_};
  std::vector<Blob*> top_{&y_};
};

TEST_F(ArgMaxLayerTest, IndicesPerItem) {
  x_.Reshape(std::vector<int64_t>{2, 4});
  FillValues(&x_, {1, 5, 3, 2, -1, -3, 0, -2});
  EXPECT_EQ(ForwardOf(R"(type: "ArgMax")"), (std::vector<float>{1, 2}));
  EXPECT_EQ(y_.shape(), (std::vector<int64_t>{2, 1, 1}));
  EXPECT_EQ(ForwardOf(R"(type: "ArgMax" argmax_param { top_k: 3 })"),
            (std::vector<float>{1, 2, 3, 2, 0, 3}));
  EXPECT_EQ(y_.shape(), (std::vector<int64_t>{2, 1, 3}));
  // out_max_val: per item, the top_k indices, then their values.
  EXPECT_EQ(ForwardOf(R"(type: "ArgMax" argmax_param { top_k: 2 out_max_val: true })"),
            (std::vector<float>{1, 2, 5, 3, 2, 0, 0, -1}));
  EXPECT_EQ(y_.shape(), (std::vector<int64_t>{2, 2, 2}));
}

TEST_F(ArgMaxLayerTest, FourAxesSearchEveryValueOfAnItem) {
  x_.Reshape(std::vector<int64_t>{2, 2, 1, 2});
  FillValues(&x_, {0, 1, 7, 2, 9, -1, 3, 4});
  EXPECT_EQ(ForwardOf(R"(type: "ArgMax")"), (std::vector<float>{2, 0}));
  EXPECT_EQ(y_.shape(), (std::vector<int64_t>{2, 1, 1, 1}));
}

TEST_F(ArgMaxLayerTest, TiesPutTheLargerIndexFirstAsInCaffe) {
  x_.Reshape(std::vector<int64_t>{1, 4});
  FillValues(&x_, {2, 7, 7, 1});
  EXPECT_EQ(ForwardOf(R"(type: "ArgMax" argmax_param { top_k: 3 })"),
            (std::vector<float>{2, 1, 0}));
}

TEST_F(ArgMaxLayerTest, AlongAnAxis) {
  // x[n][c][w]; the search runs over c for every (n, w).
  x_.Reshape(std::vector<int64_t>{2, 3, 2});
  FillValues(&x_, {1, 6, 4, 2, 3, 5, 0, -1, 0, -3, -5, -2});
  EXPECT_EQ(ForwardOf(R"(type: "ArgMax" argmax_param { axis: 1 top_k: 2 })"),
            (std::vector<float>{1, 0, 2, 2, 1, 0, 0, 2}));
  EXPECT_EQ(y_.shape(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(ForwardOf(R"(type: "ArgMax" argmax_param { axis: -2 top_k: 2 out_max_val: true })"),
            (std::vector<float>{4, 6, 3, 5, 0, -1, 0, -2}));
  EXPECT_EQ(ForwardOf(R"(type: "ArgMax" argmax_param { axis: 2 })"),
            (std::vector<float>{1, 0, 1, 0, 0, 1}));
  EXPECT_EQ(y_.shape(), (std::vector<int64_t>{2, 3, 1}));
  // Item 0 is the larger everywhere.
  EXPECT_EQ(ForwardOf(R"(type: "ArgMax" argmax_param { axis: 0 top_k: 2 })"),
            (std::vector<float>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
}

TEST_F(ArgMaxLayerTest, OddShapesMatchMaxElement) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1, 127}, {13, 1}, {3, 13}, {1}, {13}}) {
    SCOPED_TRACE(ShapeString(shape));
    x_.Reshape(shape);
    FillGaussian(&x_, 301);
    const std::vector<float> y = ForwardOf(R"(type: "ArgMax")");
    const int64_t dim = x_.count(1);
    ASSERT_EQ(static_cast<int64_t>(y.size()), x_.shape(0));
    for (int64_t n = 0; n < x_.shape(0); ++n) {
      const float* row = x_.cpu_data() + n * dim;
      EXPECT_EQ(y[n], std::max_element(row, row + dim) - row) << n;
    }
  }
}

TEST_F(ArgMaxLayerTest, HasNoGradientAndReadsNothing) {
  x_.Reshape(std::vector<int64_t>{2, 3});
  auto layer = MakeLayer(R"(name: "am" type: "ArgMax")");
  EXPECT_FALSE(layer->AllowForceBackward(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  layer->SetUp(bottom_, top_);
  layer->Forward(bottom_, top_);
  Set(x_.count(), std::numeric_limits<float>::quiet_NaN(), x_.mutable_cpu_data());
  layer->Backward(top_, {false}, bottom_);
  ExpectErrorContaining([&] { layer->Backward(top_, {true}, bottom_); },
                        {"ArgMax layer 'am'", "not differentiable"});
}

TEST_F(ArgMaxLayerTest, BadParamsAreErrors) {
  x_.Reshape(std::vector<int64_t>{2, 4});
  auto zero = MakeLayer(R"(name: "am" type: "ArgMax" argmax_param { top_k: 0 })");
  ExpectErrorContaining([&] { zero->SetUp(bottom_, top_); },
                        {"ArgMax layer 'am'", "needs top_k >= 1"});
  auto big = MakeLayer(R"(name: "am" type: "ArgMax" argmax_param { top_k: 5 })");
  ExpectErrorContaining([&] { big->SetUp(bottom_, top_); },
                        {"ArgMax layer 'am'", "top_k 5 exceeds the 4 values", "2 4 (8)"});
  auto big_axis = MakeLayer(R"(name: "am" type: "ArgMax" argmax_param { axis: 0 top_k: 3 })");
  ExpectErrorContaining([&] { big_axis->SetUp(bottom_, top_); },
                        {"top_k 3 exceeds the 2 values", "2 4 (8)"});
  auto axis = MakeLayer(R"(name: "am" type: "ArgMax" argmax_param { axis: 2 })");
  ExpectErrorContaining([&] { axis->SetUp(bottom_, top_); },
                        {"ArgMax layer 'am'", "argmax_param.axis 2 is out of range", "2 4 (8)"});
}

}  // namespace
}  // namespace demi
