#include <gtest/gtest.h>

#include "demi/layers/bias_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class BiasLayerTest : public ::testing::Test {
 protected:
  BiasLayerTest() : x_({2, 3, 2}) { FillValues(&x_, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}); }
  /// Sets up a one-bottom Bias from `bias_param`, gives its bias `values` and
  /// runs Forward.
  std::unique_ptr<Layer> ForwardWith(const std::string& bias_param,
                                     const std::vector<float>& values) {
    auto layer = MakeLayer(R"(name: "b" type: "Bias" bias_param { )" + bias_param + " }");
    layer->SetUp(bottom_vec_, top_vec_);
    FillValues(layer->blobs()[0].get(), values);
    layer->Forward(bottom_vec_, top_vec_);
    return layer;
  }
  Blob x_;
  Blob y_;
  std::vector<Blob*> bottom_vec_{&x_};
  std::vector<Blob*> top_vec_{&y_};
};

TEST_F(BiasLayerTest, ParamShapesAndForwardByHand) {
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(ForwardWith("", {10, 20, 30})->blobs()[0]->shape(), (Shape{3}));
  EXPECT_EQ(DataOf(y_), (std::vector<float>{11, 12, 23, 24, 35, 36, 17, 18, 29, 30, 41, 42}));
  EXPECT_EQ(ForwardWith("axis: 0", {100, 200})->blobs()[0]->shape(), (Shape{2}));
  EXPECT_EQ(DataOf(y_),
            (std::vector<float>{101, 102, 103, 104, 105, 106, 207, 208, 209, 210, 211, 212}));
  EXPECT_EQ(ForwardWith("axis: 2", {0.5, -0.5})->blobs()[0]->shape(), (Shape{2}));
  EXPECT_EQ(DataOf(y_),
            (std::vector<float>{1.5, 1.5, 3.5, 3.5, 5.5, 5.5, 7.5, 7.5, 9.5, 9.5, 11.5, 11.5}));
  EXPECT_EQ(ForwardWith("axis: -1", {0.5, -0.5})->blobs()[0]->shape(), (Shape{2}));
  EXPECT_EQ(y_.cpu_data()[11], 11.5f);
  EXPECT_EQ(ForwardWith("axis: 1 num_axes: -1", {1, 2, 3, 4, 5, 6})->blobs()[0]->shape(),
            (Shape{3, 2}));
  EXPECT_EQ(DataOf(y_), (std::vector<float>{2, 4, 6, 8, 10, 12, 8, 10, 12, 14, 16, 18}));
  EXPECT_EQ(ForwardWith("num_axes: 0", {1})->blobs()[0]->shape(), (Shape{}));
  EXPECT_EQ(DataOf(y_), (std::vector<float>{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(ForwardWith("axis: 0 num_axes: -1", std::vector<float>(12, -1))->blobs()[0]->shape(),
            (Shape{2, 3, 2}));
  EXPECT_EQ(DataOf(y_), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST_F(BiasLayerTest, DefaultFillerIsZero) {
  auto layer = MakeLayer(R"(type: "Bias")");
  layer->SetUp(bottom_vec_, top_vec_);
  EXPECT_EQ(DataOf(*layer->blobs()[0]), (std::vector<float>{0, 0, 0}));
  layer->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(DataOf(y_), DataOf(x_));
}

TEST_F(BiasLayerTest, BackwardByHand) {
  auto layer = ForwardWith("", {10, 20, 30});
  FillValues(&y_, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  std::copy(y_.cpu_data(), y_.cpu_data() + 12, y_.mutable_cpu_diff());
  Set(3, 0.0f, layer->blobs()[0]->mutable_cpu_diff());
  layer->Backward(top_vec_, {true}, bottom_vec_);
  EXPECT_EQ(DiffOf(x_), DataOf(y_));
  // db_c = sum of dy over the channel: 1+2+7+8, 3+4+9+10, 5+6+11+12.
  EXPECT_EQ(DiffOf(*layer->blobs()[0]), (std::vector<float>{18, 26, 34}));
  layer->Backward(top_vec_, {false}, bottom_vec_);  // param gradients accumulate
  EXPECT_EQ(DiffOf(*layer->blobs()[0]), (std::vector<float>{36, 52, 68}));
}

TEST_F(BiasLayerTest, TwoBottomsByHand) {
  Blob b({3});
  FillValues(&b, {10, 20, 30});
  std::vector<Blob*> bottom{&x_, &b};
  auto layer = MakeLayer(R"(type: "Bias")");
  layer->SetUp(bottom, top_vec_);
  EXPECT_TRUE(layer->blobs().empty());
  layer->Forward(bottom, top_vec_);
  EXPECT_EQ(DataOf(y_), (std::vector<float>{11, 12, 23, 24, 35, 36, 17, 18, 29, 30, 41, 42}));
  Set(12, 1.0f, y_.mutable_cpu_diff());
  Set(3, 100.0f, b.mutable_cpu_diff());
  layer->Backward(top_vec_, {true, true}, bottom);
  EXPECT_EQ(DiffOf(b), (std::vector<float>{4, 4, 4}));  // written, not accumulated
  EXPECT_EQ(DiffOf(x_), std::vector<float>(12, 1.0f));

  Blob grid({2, 3});
  FillValues(&grid, {1, 2, 3, 4, 5, 6});
  bottom = {&x_, &grid};
  auto first = MakeLayer(R"(type: "Bias" bias_param { axis: 0 })");
  first->SetUp(bottom, top_vec_);
  first->Forward(bottom, top_vec_);
  EXPECT_EQ(DataOf(y_), (std::vector<float>{2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}));

  Blob scalar(std::vector<int64_t>{});
  FillValues(&scalar, {-1});
  bottom = {&x_, &scalar};
  auto whole = MakeLayer(R"(type: "Bias" bias_param { axis: -1 })");  // a scalar ignores axis
  whole->SetUp(bottom, top_vec_);
  whole->Forward(bottom, top_vec_);
  EXPECT_EQ(DataOf(y_), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST_F(BiasLayerTest, InPlaceMatchesOutOfPlace) {
  auto plain = ForwardWith("", {10, 20, 30});
  const std::vector<float> expected = DataOf(y_);
  Blob z({2, 3, 2});
  z.CopyFrom(x_);
  std::vector<Blob*> both{&z};
  auto in_place = MakeLayer(R"(type: "Bias")");
  in_place->SetUp(both, both);
  EXPECT_TRUE(in_place->buffers().empty());
  FillValues(in_place->blobs()[0].get(), {10, 20, 30});
  in_place->Forward(both, both);
  EXPECT_EQ(DataOf(z), expected);
  Set(12, 2.0f, z.mutable_cpu_diff());
  Set(3, 0.0f, in_place->blobs()[0]->mutable_cpu_diff());
  in_place->Backward(both, {true}, both);
  EXPECT_EQ(DiffOf(z), std::vector<float>(12, 2.0f));
  EXPECT_EQ(DiffOf(*in_place->blobs()[0]), (std::vector<float>{8, 8, 8}));
}

TEST_F(BiasLayerTest, DeclaresNoBackwardReads) {
  auto layer = MakeLayer(R"(type: "Bias")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
}

class BiasGradientTest : public ::testing::Test {
 protected:
  BiasGradientTest() : x_({2, 3, 4, 2}) { FillGaussian(&x_, 91); }
  void Check(const std::string& bias_param, std::vector<Blob*> bottom) {
    auto layer = MakeLayer(R"(type: "Bias" bias_param { )" + bias_param +
                           R"( filler { type: "gaussian" } })");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top_vec_);
  }
  Blob x_;
  Blob y_;
  std::vector<Blob*> top_vec_{&y_};
};

TEST_F(BiasGradientTest, OneBottom) {
  for (const char* param : {"", "axis: 0", "axis: 2", "axis: -1", "axis: 1 num_axes: -1",
                            "axis: 0 num_axes: -1", "num_axes: 0", "axis: 1 num_axes: 2"}) {
    SCOPED_TRACE(param);
    Check(param, {&x_});
  }
}

TEST_F(BiasGradientTest, TwoBottoms) {
  Blob channels({3}), plane({3, 4}), scalar(std::vector<int64_t>{});
  FillGaussian(&channels, 92);
  FillGaussian(&plane, 93);
  FillGaussian(&scalar, 94);
  Check("", {&x_, &channels});
  Check("axis: -3", {&x_, &plane});
  Check("", {&x_, &scalar});
}

TEST_F(BiasGradientTest, OddShapes) {
  Blob x({1, 13}), b({13});
  FillGaussian(&x, 95);
  FillGaussian(&b, 96);
  Check("", {&x});
  Check("axis: -1", {&x, &b});
}

TEST_F(BiasLayerTest, Errors) {
  const std::string shape = "2 3 2 (12)";
  auto bad_axis = MakeLayer(R"(name: "b" type: "Bias" bias_param { axis: -4 })");
  ExpectErrorContaining([&] { bad_axis->SetUp(bottom_vec_, top_vec_); },
                        {"Bias layer 'b'", "bias_param.axis -4", "out of range", shape});
  auto bad_num = MakeLayer(R"(name: "b" type: "Bias" bias_param { num_axes: -3 })");
  ExpectErrorContaining([&] { bad_num->SetUp(bottom_vec_, top_vec_); },
                        {"'b'", "bias_param.num_axes -3"});
  auto past = MakeLayer(R"(name: "b" type: "Bias" bias_param { axis: 1 num_axes: 3 })");
  ExpectErrorContaining([&] { past->SetUp(bottom_vec_, top_vec_); },
                        {"'b'", "axis 1 + num_axes 3", "past the end", shape});

  Blob wrong({3, 3});
  std::vector<Blob*> mismatch{&x_, &wrong};
  auto two = MakeLayer(R"(name: "b" type: "Bias")");
  ExpectErrorContaining([&] { two->SetUp(mismatch, top_vec_); },
                        {"'b'", "bias of shape 3 3 (9) (bottom 1)", shape, "from axis 1"});
  auto one = MakeLayer(R"(name: "b" type: "Bias")");
  one->SetUp(bottom_vec_, top_vec_);
  x_.Reshape({2, 4, 2});
  ExpectErrorContaining([&] { one->Reshape(bottom_vec_, top_vec_); },
                        {"'b'", "bias of shape 3 (3) (param)", "2 4 2 (16)"});

  x_.Reshape({2, 3, 2});
  auto preloaded = LayerRegistry::Create(ParseText<LayerParameter>(R"(
      name: "b" type: "Bias"
      blobs { shape { dim: 3 } data: 1 data: 1 data: 1 }
      blobs { shape { dim: 3 } data: 1 data: 1 data: 1 })"));
  ExpectErrorContaining([&] { preloaded->SetUp(bottom_vec_, top_vec_); },
                        {"Bias layer 'b'", "one param blob", "given 2"});
  Blob b({3});
  std::vector<Blob*> two_bottoms{&x_, &b};
  auto extra = LayerRegistry::Create(ParseText<LayerParameter>(R"(
      name: "b" type: "Bias" blobs { shape { dim: 3 } data: 1 data: 1 data: 1 })"));
  ExpectErrorContaining([&] { extra->SetUp(two_bottoms, top_vec_); },
                        {"Bias layer 'b'", "from bottom 1", "given 1 param blobs"});
}

}  // namespace
}  // namespace demi
