#include <gtest/gtest.h>

#include "demi/layers/scale_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class ScaleLayerTest : public ::testing::Test {
 protected:
  ScaleLayerTest() : x_({2, 3, 2}) { FillValues(&x_, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}); }
  /// Sets up a one-bottom Scale from `scale_param`, gives its scale `values`
  /// and runs Forward.
  std::unique_ptr<Layer> ForwardWith(const std::string& scale_param,
                                     const std::vector<float>& values) {
    auto layer = MakeLayer(R"(name: "sc" type: "Scale" scale_param { )" + scale_param + " }");
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

TEST_F(ScaleLayerTest, ParamShapesFollowAxisAndNumAxes) {
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(ForwardWith("", {1, 1, 1})->blobs()[0]->shape(), (Shape{3}));
  EXPECT_EQ(ForwardWith("axis: 0", {1, 1})->blobs()[0]->shape(), (Shape{2}));
  EXPECT_EQ(ForwardWith("axis: 2", {1, 1})->blobs()[0]->shape(), (Shape{2}));
  EXPECT_EQ(ForwardWith("axis: 1 num_axes: -1", std::vector<float>(6, 1))->blobs()[0]->shape(),
            (Shape{3, 2}));
  EXPECT_EQ(ForwardWith("axis: 0 num_axes: -1", std::vector<float>(12, 1))->blobs()[0]->shape(),
            (Shape{2, 3, 2}));
  EXPECT_EQ(ForwardWith("axis: 0 num_axes: 2", std::vector<float>(6, 1))->blobs()[0]->shape(),
            (Shape{2, 3}));
  EXPECT_EQ(ForwardWith("num_axes: 0", {1})->blobs()[0]->shape(), (Shape{}));
  EXPECT_EQ(ForwardWith("axis: 2 num_axes: 0", {1})->blobs()[0]->shape(), (Shape{}));
}

TEST_F(ScaleLayerTest, ForwardByHand) {
  ForwardWith("", {1, -1, 0.5});
  EXPECT_EQ(DataOf(y_), (std::vector<float>{1, 2, -3, -4, 2.5, 3, 7, 8, -9, -10, 5.5, 6}));
  ForwardWith("axis: 0", {2, -1});
  EXPECT_EQ(DataOf(y_), (std::vector<float>{2, 4, 6, 8, 10, 12, -7, -8, -9, -10, -11, -12}));
  ForwardWith("axis: -1", {1, 10});
  EXPECT_EQ(DataOf(y_), (std::vector<float>{1, 20, 3, 40, 5, 60, 7, 80, 9, 100, 11, 120}));
  ForwardWith("axis: 1 num_axes: -1", {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(DataOf(y_), (std::vector<float>{1, 4, 9, 16, 25, 36, 7, 16, 27, 40, 55, 72}));
  ForwardWith("num_axes: 0", {3});
  EXPECT_EQ(DataOf(y_), (std::vector<float>{3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36}));
}

TEST_F(ScaleLayerTest, DefaultFillersGiveTheIdentity) {
  auto layer = MakeLayer(R"(type: "Scale" scale_param { bias_term: true })");
  layer->SetUp(bottom_vec_, top_vec_);
  ASSERT_EQ(layer->blobs().size(), 2u);
  EXPECT_EQ(DataOf(*layer->blobs()[0]), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(DataOf(*layer->blobs()[1]), (std::vector<float>{0, 0, 0}));
  layer->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(DataOf(y_), DataOf(x_));
}

TEST_F(ScaleLayerTest, BiasTermByHand) {
  auto layer = MakeLayer(R"(type: "Scale" scale_param { bias_term: true })");
  layer->SetUp(bottom_vec_, top_vec_);
  FillValues(layer->blobs()[0].get(), {1, -1, 0.5});
  FillValues(layer->blobs()[1].get(), {10, 20, 30});
  layer->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(DataOf(y_), (std::vector<float>{11, 12, 17, 16, 32.5, 33, 17, 18, 11, 10, 35.5, 36}));
}

TEST_F(ScaleLayerTest, BackwardByHandAccumulatesParamGradients) {
  auto layer = MakeLayer(R"(type: "Scale" scale_param { bias_term: true })");
  layer->SetUp(bottom_vec_, top_vec_);
  FillValues(layer->blobs()[0].get(), {1, -1, 0.5});
  layer->Forward(bottom_vec_, top_vec_);
  Set(y_.count(), 1.0f, y_.mutable_cpu_diff());
  for (auto& blob : layer->blobs()) Set(blob->count(), 0.0f, blob->mutable_cpu_diff());
  layer->Backward(top_vec_, {true}, bottom_vec_);
  EXPECT_EQ(DiffOf(x_), (std::vector<float>{1, 1, -1, -1, 0.5, 0.5, 1, 1, -1, -1, 0.5, 0.5}));
  // ds_c = sum of x over the channel: 1+2+7+8, 3+4+9+10, 5+6+11+12; db_c = 4.
  EXPECT_EQ(DiffOf(*layer->blobs()[0]), (std::vector<float>{18, 26, 34}));
  EXPECT_EQ(DiffOf(*layer->blobs()[1]), (std::vector<float>{4, 4, 4}));
  layer->Backward(top_vec_, {false}, bottom_vec_);
  EXPECT_EQ(DiffOf(*layer->blobs()[0]), (std::vector<float>{36, 52, 68}));
  EXPECT_EQ(DiffOf(*layer->blobs()[1]), (std::vector<float>{8, 8, 8}));
  EXPECT_EQ(DiffOf(x_)[2], -1.0f);  // propagate_down false left dx alone
}

TEST_F(ScaleLayerTest, TwoBottomsByHand) {
  Blob s({3});
  FillValues(&s, {1, -1, 0.5});
  std::vector<Blob*> bottom{&x_, &s};
  auto layer = MakeLayer(R"(type: "Scale")");
  layer->SetUp(bottom, top_vec_);
  EXPECT_TRUE(layer->blobs().empty());
  layer->Forward(bottom, top_vec_);
  EXPECT_EQ(DataOf(y_), (std::vector<float>{1, 2, -3, -4, 2.5, 3, 7, 8, -9, -10, 5.5, 6}));
  Set(y_.count(), 1.0f, y_.mutable_cpu_diff());
  // Bottom 1's gradient is written, not accumulated.
  Set(s.count(), 100.0f, s.mutable_cpu_diff());
  layer->Backward(top_vec_, {true, true}, bottom);
  EXPECT_EQ(DiffOf(s), (std::vector<float>{18, 26, 34}));
  EXPECT_EQ(DiffOf(x_), (std::vector<float>{1, 1, -1, -1, 0.5, 0.5, 1, 1, -1, -1, 0.5, 0.5}));

  Blob grid({2, 3});
  FillValues(&grid, {1, 2, 3, 4, 5, 6});
  bottom = {&x_, &grid};
  auto first = MakeLayer(R"(type: "Scale" scale_param { axis: 0 })");
  first->SetUp(bottom, top_vec_);
  first->Forward(bottom, top_vec_);
  EXPECT_EQ(DataOf(y_), (std::vector<float>{1, 2, 6, 8, 15, 18, 28, 32, 45, 50, 66, 72}));

  Blob scalar(std::vector<int64_t>{});
  FillValues(&scalar, {-2});
  bottom = {&x_, &scalar};
  auto whole = MakeLayer(R"(type: "Scale" scale_param { axis: 2 })");  // a scalar ignores axis
  whole->SetUp(bottom, top_vec_);
  whole->Forward(bottom, top_vec_);
  EXPECT_EQ(DataOf(y_),
            (std::vector<float>{-2, -4, -6, -8, -10, -12, -14, -16, -18, -20, -22, -24}));
}

TEST_F(ScaleLayerTest, TwoBottomsWithBias) {
  Blob s({3, 2});
  FillValues(&s, {1, 1, 2, 2, 0, 0});
  std::vector<Blob*> bottom{&x_, &s};
  auto layer = MakeLayer(R"(type: "Scale" scale_param { bias_term: true
                            bias_filler { type: "constant" value: 0.5 } })");
  layer->SetUp(bottom, top_vec_);
  ASSERT_EQ(layer->blobs().size(), 1u);  // only the bias
  EXPECT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{3, 2}));
  layer->Forward(bottom, top_vec_);
  EXPECT_EQ(DataOf(y_),
            (std::vector<float>{1.5, 2.5, 6.5, 8.5, 0.5, 0.5, 7.5, 8.5, 18.5, 20.5, 0.5, 0.5}));
}

TEST_F(ScaleLayerTest, InPlaceMatchesOutOfPlaceAndKeepsACopy) {
  Blob x({2, 3, 4});
  FillGaussian(&x, 81);
  Blob dy({2, 3, 4});
  FillGaussian(&dy, 82);
  const char* text = R"(type: "Scale" scale_param { bias_term: true
                        filler { type: "gaussian" } bias_filler { type: "gaussian" } })";
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto plain = MakeLayer(text);
  plain->SetUp(bottom, top);
  EXPECT_TRUE(plain->buffers().empty());
  plain->Forward(bottom, top);
  Copy(dy.count(), dy.cpu_data(), y.mutable_cpu_diff());
  for (auto& blob : plain->blobs()) Set(blob->count(), 0.0f, blob->mutable_cpu_diff());
  plain->Backward(top, {true}, bottom);

  Blob z({2, 3, 4});
  z.CopyFrom(x);
  std::vector<Blob*> both{&z};
  auto in_place = MakeLayer(text);
  in_place->SetUp(both, both);
  ASSERT_EQ(in_place->buffers().size(), 1u);
  EXPECT_EQ(in_place->buffers()[0].name, "input");
  EXPECT_EQ(in_place->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  for (size_t i = 0; i < 2; ++i) in_place->blobs()[i]->CopyFrom(*plain->blobs()[i]);
  in_place->Forward(both, both);
  EXPECT_EQ(DataOf(z), DataOf(y));
  Copy(dy.count(), dy.cpu_data(), z.mutable_cpu_diff());
  for (auto& blob : in_place->blobs()) Set(blob->count(), 0.0f, blob->mutable_cpu_diff());
  in_place->Backward(both, {true}, both);
  EXPECT_EQ(DiffOf(z), DiffOf(x));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(DiffOf(*in_place->blobs()[i]), DiffOf(*plain->blobs()[i])) << "param " << i;
  }
}

TEST_F(ScaleLayerTest, DeclaresBackwardReads) {
  auto layer = MakeLayer(R"(type: "Scale")");
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
}

class ScaleGradientTest : public ::testing::Test {
 protected:
  ScaleGradientTest() : x_({2, 3, 4, 2}) { FillGaussian(&x_, 83); }
  void Check(const std::string& scale_param, std::vector<Blob*> bottom) {
    auto layer = MakeLayer(R"(type: "Scale" scale_param { )" + scale_param +
                           R"( filler { type: "gaussian" } bias_filler { type: "gaussian" } })");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top_vec_);
  }
  Blob x_;
  Blob y_;
  std::vector<Blob*> top_vec_{&y_};
};

TEST_F(ScaleGradientTest, OneBottom) {
  for (const char* param :
       {"", "bias_term: true", "axis: 0", "axis: 2 bias_term: true", "axis: -1",
        "axis: 1 num_axes: -1", "axis: 0 num_axes: -1", "num_axes: 0 bias_term: true",
        "axis: 2 num_axes: 0", "axis: 1 num_axes: 2"}) {
    SCOPED_TRACE(param);
    Check(param, {&x_});
  }
}

TEST_F(ScaleGradientTest, TwoBottoms) {
  Blob channels({3}), plane({3, 4}), scalar(std::vector<int64_t>{}), all({2, 3, 4, 2});
  FillGaussian(&channels, 84);
  FillGaussian(&plane, 85);
  FillGaussian(&scalar, 86);
  FillGaussian(&all, 87);
  Check("", {&x_, &channels});
  Check("bias_term: true", {&x_, &plane});
  Check("axis: 0", {&x_, &all});
  Check("axis: -3 bias_term: true", {&x_, &channels});
  Check("", {&x_, &scalar});
}

TEST_F(ScaleGradientTest, OddShapes) {
  Blob x({1, 13}), s({13});
  FillGaussian(&x, 88);
  FillGaussian(&s, 89);
  Check("bias_term: true", {&x});
  Check("", {&x, &s});
}

TEST_F(ScaleLayerTest, Errors) {
  const std::string shape = "2 3 2 (12)";
  auto bad_axis = MakeLayer(R"(name: "sc" type: "Scale" scale_param { axis: 3 })");
  ExpectErrorContaining([&] { bad_axis->SetUp(bottom_vec_, top_vec_); },
                        {"Scale layer 'sc'", "scale_param.axis 3", "out of range", shape});
  auto bad_num = MakeLayer(R"(name: "sc" type: "Scale" scale_param { num_axes: -2 })");
  ExpectErrorContaining([&] { bad_num->SetUp(bottom_vec_, top_vec_); },
                        {"'sc'", "scale_param.num_axes -2"});
  auto past = MakeLayer(R"(name: "sc" type: "Scale" scale_param { axis: 2 num_axes: 2 })");
  ExpectErrorContaining([&] { past->SetUp(bottom_vec_, top_vec_); },
                        {"'sc'", "axis 2 + num_axes 2", "past the end", shape});

  Blob s({4});
  std::vector<Blob*> mismatch{&x_, &s};
  auto two = MakeLayer(R"(name: "sc" type: "Scale")");
  ExpectErrorContaining([&] { two->SetUp(mismatch, top_vec_); },
                        {"'sc'", "scale of shape 4 (4) (bottom 1)", shape, "from axis 1"});
  auto one = MakeLayer(R"(name: "sc" type: "Scale")");
  one->SetUp(bottom_vec_, top_vec_);
  x_.Reshape({2, 5, 2});
  ExpectErrorContaining([&] { one->Reshape(bottom_vec_, top_vec_); },
                        {"'sc'", "scale of shape 3 (3) (param)", "2 5 2 (20)", "from axis 1"});

  x_.Reshape({2, 3, 2});
  Blob plane({3});
  std::vector<Blob*> with_bias{&x_, &plane};
  auto biased = MakeLayer(R"(name: "sc" type: "Scale" scale_param { bias_term: true })");
  biased->SetUp(with_bias, top_vec_);
  plane.Reshape({3, 2});  // still fits x, but no longer the bias' shape
  ExpectErrorContaining([&] { biased->Reshape(with_bias, top_vec_); },
                        {"'sc'", "bias of shape 3 (3)", "scale of shape 3 2 (6)"});

  auto preloaded = LayerRegistry::Create(ParseText<LayerParameter>(R"(
      name: "sc" type: "Scale" scale_param { bias_term: true }
      blobs { shape { dim: 3 } data: 1 data: 1 data: 1 })"));
  ExpectErrorContaining([&] { preloaded->SetUp(bottom_vec_, top_vec_); },
                        {"Scale layer 'sc'", "has 2 param blobs", "given 1"});
}

}  // namespace
}  // namespace demi
