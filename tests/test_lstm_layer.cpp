#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "demi/layers/lstm_layer.hpp"
#include "demi/net.hpp"
#include "gradient_checker.hpp"
#include "net_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

constexpr const char* kFillers =
    R"(weight_filler { type: "uniform" min: -0.5 max: 0.5 }
       bias_filler { type: "uniform" min: -0.5 max: 0.5 })";

std::string LSTMText(int num_output, bool expose_hidden = false) {
  return StrCat("name: 'lstm' type: 'LSTM' recurrent_param { num_output: ", num_output,
                expose_hidden ? " expose_hidden: true " : " ", kFillers, " }");
}

class LSTMLayerTest : public ::testing::Test {
 protected:
  /// x of `x_shape` (Gaussian), cont of T x N with `cont` values.
  void SetInputs(const std::vector<int64_t>& x_shape, const std::vector<float>& cont) {
    x_.Reshape(x_shape);
    FillGaussian(&x_, 3);
    cont_.Reshape({x_shape[0], x_shape[1]});
    FillValues(&cont_, cont);
  }

  /// W_xc, b_c and (at `w_hc`) W_hc of a 1-unit layer over 1 input value,
  /// gate rows in the order i, f, o, g.
  static void SetScalarParams(Layer* layer, int w_hc = 2) {
    const auto& p = layer->blobs();
    FillValues(p[0].get(), {0.5f, -0.3f, 0.8f, 1.2f});     // W_xc
    FillValues(p[1].get(), {0.1f, 0.2f, -0.1f, 0.05f});    // b_c
    FillValues(p[w_hc].get(), {0.4f, -0.6f, 0.3f, 0.7f});  // W_hc
  }

  Blob x_, cont_, static_, h0_, c0_;
  Blob top_, h_last_, c_last_;
  std::vector<Blob*> bottom_vec_{&x_, &cont_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(LSTMLayerTest, ShapesParamsAndBuffers) {
  SetInputs({3, 2, 4, 1}, {0, 0, 1, 1, 1, 0});
  auto layer = MakeLayer(LSTMText(5));
  layer->SetUp(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{3, 2, 5}));
  ASSERT_EQ(layer->blobs().size(), 3u);  // W_xc, b_c, W_hc
  const std::vector<std::vector<int64_t>> shapes{{20, 4}, {20}, {20, 5}};
  for (size_t i = 0; i < shapes.size(); ++i) EXPECT_EQ(layer->blobs()[i]->shape(), shapes[i]);
  const std::vector<std::string> names{"gates",          "gates_diff",  "step_rows", "cells",
                                       "initial_hidden", "hidden_diff", "cell_diff"};
  const BufferLifetime saved = BufferLifetime::kSavedForBackward;
  const BufferLifetime scratch = BufferLifetime::kScratch;
  const std::vector<BufferLifetime> lifetimes{saved, scratch, scratch, saved,
                                              saved, scratch, scratch};
  const std::vector<std::vector<int64_t>> buffer_shapes{{3, 2, 20}, {3, 2, 20}, {2, 20}, {4, 2, 5},
                                                        {2, 5},     {2, 5},     {2, 5}};
  ASSERT_EQ(layer->buffers().size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(layer->buffers()[i].name, names[i]);
    EXPECT_EQ(layer->buffers()[i].lifetime, lifetimes[i]) << names[i];
    EXPECT_EQ(layer->buffers()[i].blob->shape(), buffer_shapes[i]) << names[i];
  }
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsBottomData(1));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));  // h, for W_hc's gradient
  EXPECT_FALSE(layer->AllowForceBackward(1));

  // A static input adds W_x_static after b_c; expose_hidden adds h_0, c_0 and h_T, c_T.
  static_.Reshape({2, 3, 2});
  h0_.Reshape({1, 2, 5});
  c0_.Reshape({1, 2, 5});
  std::vector<Blob*> bottoms{&x_, &cont_, &static_, &h0_, &c0_};
  std::vector<Blob*> tops{&top_, &h_last_, &c_last_};
  auto full = MakeLayer(LSTMText(5, true));
  full->SetUp(bottoms, tops);
  ASSERT_EQ(full->blobs().size(), 4u);
  const std::vector<std::vector<int64_t>> full_shapes{{20, 4}, {20}, {20, 6}, {20, 5}};
  for (size_t i = 0; i < full_shapes.size(); ++i) {
    EXPECT_EQ(full->blobs()[i]->shape(), full_shapes[i]);
  }
  EXPECT_EQ(h_last_.shape(), (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(c_last_.shape(), (std::vector<int64_t>{1, 2, 5}));
  EXPECT_TRUE(full->BackwardReadsBottomData(2));
  EXPECT_FALSE(full->BackwardReadsBottomData(3));
  EXPECT_FALSE(full->BackwardReadsBottomData(4));
  EXPECT_FALSE(full->BackwardReadsTopData(1));
  EXPECT_FALSE(full->BackwardReadsTopData(2));
}

TEST_F(LSTMLayerTest, ForwardByHandTwoSteps) {
  x_.Reshape({2, 1, 1});
  FillValues(&x_, {1, -0.5f});
  cont_.Reshape({2, 1});
  FillValues(&cont_, {0, 1});
  auto layer = MakeLayer(LSTMText(1));
  layer->SetUp(bottom_vec_, top_vec_);
  SetScalarParams(layer.get());
  layer->Forward(bottom_vec_, top_vec_);
  // t = 0 (cont 0): pre-activations W_xc + b_c = [0.6 -0.1 0.7 1.25]:
  //   i = sigmoid(0.6) = 0.645656306, f = sigmoid(-0.1) = 0.475020813,
  //   o = sigmoid(0.7) = 0.668187772, g = tanh(1.25) = 0.848283640;
  //   c = i g = 0.547699682 (f c_{-1} dropped), h = o tanh(c) = 0.333288176.
  // t = 1 (cont 1): -0.5 W_xc + b_c + h W_hc
  //   = [-0.015 0.15 -0.4 -0.55] + 0.333288176 [0.4 -0.6 0.3 0.7]:
  //   i = 0.495828914, f = 0.537436581, o = 0.401309085, g = -0.306518442;
  //   c = f 0.547699682 + i g = 0.142373138, h = o tanh(c) = 0.056752690.
  ExpectNear(DataOf(top_), {0.333288176f, 0.056752690f});
  ExpectNear(DataOf(*layer->buffers()[0].blob),
             {0.645656306f, 0.475020813f, 0.668187772f, 0.848283640f,  //
              0.495828914f, 0.537436581f, 0.401309085f, -0.306518442f});
  ExpectNear(DataOf(*layer->buffers()[3].blob), {0, 0.547699682f, 0.142373138f});
}

TEST_F(LSTMLayerTest, ForwardByHandExposedStates) {
  x_.Reshape({1, 1, 1});
  FillValues(&x_, {1});
  cont_.Reshape({1, 1});
  FillValues(&cont_, {1});
  h0_.Reshape({1, 1, 1});
  FillValues(&h0_, {0.5f});
  c0_.Reshape({1, 1, 1});
  FillValues(&c0_, {-1});
  std::vector<Blob*> bottoms{&x_, &cont_, &h0_, &c0_}, tops{&top_, &h_last_, &c_last_};
  auto layer = MakeLayer(LSTMText(1, true));
  layer->SetUp(bottoms, tops);
  SetScalarParams(layer.get());
  layer->Forward(bottoms, tops);
  // [0.6 -0.1 0.7 1.25] + 0.5 [0.4 -0.6 0.3 0.7] = [0.8 -0.4 0.85 1.6]:
  // i = 0.689974481, f = 0.401312340, o = 0.700567142, g = 0.921668554;
  // c = f (-1) + i g = 0.234615443, h = o tanh(c) = 0.161413053.
  ExpectNear(DataOf(top_), {0.161413053f});
  ExpectNear(DataOf(h_last_), {0.161413053f});
  ExpectNear(DataOf(c_last_), {0.234615443f});
  // cont 0 drops both states: the first step of ForwardByHandTwoSteps.
  FillValues(&cont_, {0});
  layer->Forward(bottoms, tops);
  ExpectNear(DataOf(h_last_), {0.333288176f});
  ExpectNear(DataOf(c_last_), {0.547699682f});
}

TEST_F(LSTMLayerTest, ForwardByHandStaticInput) {
  x_.Reshape({1, 1, 1});
  FillValues(&x_, {1});
  cont_.Reshape({1, 1});
  FillValues(&cont_, {0});
  static_.Reshape({1, 1, 1});
  FillValues(&static_, {2});
  std::vector<Blob*> bottoms{&x_, &cont_, &static_};
  auto layer = MakeLayer(LSTMText(1));
  layer->SetUp(bottoms, top_vec_);
  SetScalarParams(layer.get(), 3);
  FillValues(layer->blobs()[2].get(), {0.1f, 0.2f, 0.3f, 0.4f});  // W_x_static
  layer->Forward(bottoms, top_vec_);
  // [0.6 -0.1 0.7 1.25] + 2 [0.1 0.2 0.3 0.4] = [0.8 0.3 1.3 2.05]:
  // c = sigmoid(0.8) tanh(2.05) = 0.667477864, h = sigmoid(1.3) tanh(c) = 0.458391987.
  ExpectNear(DataOf(top_), {0.458391987f});
}

TEST_F(LSTMLayerTest, CarriesTheStatesAcrossBatches) {
  // Two batches of 3 steps with cont 1 at the second batch's start equal one
  // batch of 6 steps.
  SetInputs({6, 2, 3}, {0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1});
  auto whole = MakeLayer(LSTMText(4));
  whole->SetUp(bottom_vec_, top_vec_);
  whole->Forward(bottom_vec_, top_vec_);
  const std::vector<float> expected = DataOf(top_);

  LayerParameter param = ParseText<LayerParameter>(LSTMText(4));
  for (const auto& blob : whole->blobs()) blob->ToProto(param.add_blobs());
  auto halves = LayerRegistry::Create(param);
  Blob x_half({3, 2, 3}), cont_half({3, 2}), top_half;
  std::vector<Blob*> bottoms{&x_half, &cont_half}, tops{&top_half};
  halves->SetUp(bottoms, tops);
  std::vector<float> got;
  for (int half = 0; half < 2; ++half) {
    Copy(x_half.count(), x_.cpu_data() + half * x_half.count(), x_half.mutable_cpu_data());
    Copy(6, cont_.cpu_data() + half * 6, cont_half.mutable_cpu_data());
    halves->Forward(bottoms, tops);
    const std::vector<float> part = DataOf(top_half);
    got.insert(got.end(), part.begin(), part.end());
  }
  ExpectNear(got, expected);

  // A new number of streams starts from zero: cont 1 then acts like cont 0.
  x_half.Reshape({3, 1, 3});
  cont_half.Reshape({3, 1});
  FillGaussian(&x_half, 9);
  FillValues(&cont_half, {1, 1, 1});
  halves->Reshape(bottoms, tops);
  halves->Forward(bottoms, tops);
  const std::vector<float> from_zero = DataOf(top_half);
  FillValues(&cont_half, {0, 1, 1});
  halves->Reshape(bottoms, tops);
  halves->Forward(bottoms, tops);
  ExpectNear(DataOf(top_half), from_zero);
}

TEST_F(LSTMLayerTest, GradientThroughTimeWithRestarts) {
  // Stream 0 restarts at t = 3, stream 1 at t = 2.
  SetInputs({5, 2, 3}, {0, 0, 1, 1, 1, 0, 0, 1, 1, 1});
  auto layer = MakeLayer(LSTMText(3));
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_, 0);
}

TEST_F(LSTMLayerTest, GradientOddShapes) {
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{1, 1, 1}, {4, 3, 2, 2}, {2, 1, 13}}) {
    std::vector<float> cont(static_cast<size_t>(shape[0] * shape[1]), 1.0f);
    for (int64_t n = 0; n < shape[1]; ++n) cont[n] = 0.0f;
    SetInputs(shape, cont);
    auto layer = MakeLayer(LSTMText(shape[0] == 4 ? 1 : 2));
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom_vec_, top_vec_, 0);
  }
}

TEST_F(LSTMLayerTest, GradientStaticInput) {
  SetInputs({4, 3, 2}, {0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1});
  static_.Reshape({3, 5});
  FillGaussian(&static_, 4);
  std::vector<Blob*> bottoms{&x_, &cont_, &static_};
  auto layer = MakeLayer(LSTMText(2));
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottoms, top_vec_, 2);
  checker.CheckGradient(layer.get(), bottoms, top_vec_, 0);
}

TEST_F(LSTMLayerTest, GradientExposedStates) {
  // cont 1 at t = 0 for stream 1: h_0 and c_0 reach the outputs; stream 0 drops them.
  SetInputs({4, 2, 3}, {0, 1, 1, 1, 1, 0, 1, 1});
  static_.Reshape({2, 2});
  FillGaussian(&static_, 5);
  h0_.Reshape({1, 2, 3});
  FillGaussian(&h0_, 6);
  c0_.Reshape({1, 2, 3});
  FillGaussian(&c0_, 7);
  std::vector<Blob*> bottoms{&x_, &cont_, &static_, &h0_, &c0_};
  std::vector<Blob*> tops{&top_, &h_last_, &c_last_};
  auto layer = MakeLayer(LSTMText(3, true));
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottoms, tops, 3);
  checker.CheckGradient(layer.get(), bottoms, tops, 4);
  for (Blob* state : {&h0_, &c0_}) {
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(state->cpu_diff()[i], 0.0f);
    EXPECT_GT(state->asum_diff(), 1e-3);
  }
  checker.CheckGradient(layer.get(), bottoms, tops, 0);
}

TEST_F(LSTMLayerTest, BackwardWritesBottomsAndAccumulatesParams) {
  SetInputs({3, 2, 3}, {0, 0, 1, 0, 1, 1});
  h0_.Reshape({1, 2, 4});
  FillGaussian(&h0_, 7);
  c0_.Reshape({1, 2, 4});
  FillGaussian(&c0_, 8);
  std::vector<Blob*> bottoms{&x_, &cont_, &h0_, &c0_}, tops{&top_, &h_last_, &c_last_};
  auto layer = MakeLayer(LSTMText(4, true));
  layer->SetUp(bottoms, tops);
  layer->Forward(bottoms, tops);
  for (Blob* top : tops) {
    Blob noise(top->shape());
    FillGaussian(&noise, static_cast<uint32_t>(10 + top->count()));
    Copy(noise.count(), noise.cpu_data(), top->mutable_cpu_diff());
  }
  Set(h_last_.count(), kNaN, h_last_.mutable_cpu_data());  // Backward must not read them
  Set(c_last_.count(), kNaN, c_last_.mutable_cpu_data());
  Set(h0_.count(), kNaN, h0_.mutable_cpu_data());  // copied in Forward
  Set(c0_.count(), kNaN, c0_.mutable_cpu_data());
  for (Blob* bottom : {&x_, &h0_, &c0_}) {
    Set(bottom->count(), kNaN, bottom->mutable_cpu_diff());  // written, not accumulated
  }
  Set(cont_.count(), 5.0f, cont_.mutable_cpu_diff());  // never written
  for (auto& param : layer->blobs()) Set(param->count(), 0.0f, param->mutable_cpu_diff());
  const std::vector<bool> down{true, false, true, true};
  layer->Backward(tops, down, bottoms);
  const std::vector<float> dx = DiffOf(x_), dh0 = DiffOf(h0_), dc0 = DiffOf(c0_);
  for (const auto* diff : {&dx, &dh0, &dc0}) {
    for (float v : *diff) ASSERT_TRUE(std::isfinite(v));
  }
  for (float v : DiffOf(cont_)) EXPECT_EQ(v, 5.0f);
  std::vector<std::vector<float>> grads;
  for (auto& param : layer->blobs()) grads.push_back(DiffOf(*param));
  layer->Backward(tops, down, bottoms);
  ExpectNear(DiffOf(x_), dx);
  ExpectNear(DiffOf(h0_), dh0);
  ExpectNear(DiffOf(c0_), dc0);
  for (size_t i = 0; i < grads.size(); ++i) {
    const std::vector<float> again = DiffOf(*layer->blobs()[i]);
    for (size_t k = 0; k < again.size(); ++k) EXPECT_NEAR(again[k], 2 * grads[i][k], 1e-5);
  }
}

TEST_F(LSTMLayerTest, PropagateDownFlagsAreRespected) {
  SetInputs({2, 2, 3}, {0, 0, 1, 1});
  auto layer = MakeLayer(LSTMText(2));
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  Set(top_.count(), 1.0f, top_.mutable_cpu_diff());
  Set(x_.count(), 42.0f, x_.mutable_cpu_diff());
  for (auto& param : layer->blobs()) Set(param->count(), 0.0f, param->mutable_cpu_diff());
  layer->set_param_propagate_down(0, false);
  layer->set_param_propagate_down(2, false);
  layer->Backward(top_vec_, {false, false}, bottom_vec_);
  for (float v : DiffOf(x_)) EXPECT_EQ(v, 42.0f);
  for (int i : {0, 2}) {
    for (float v : DiffOf(*layer->blobs()[i])) EXPECT_EQ(v, 0.0f) << "param " << i;
  }
  EXPECT_GT(layer->blobs()[1]->asum_diff(), 1e-3);  // b_c still learns

  ExpectErrorContaining(
      [&] {
        layer->Backward(top_vec_, {true, true}, bottom_vec_);
      },
      {"LSTM layer 'lstm'", "cannot backpropagate", "continuation"});
}

TEST_F(LSTMLayerTest, BadShapesNameTheLayer) {
  SetInputs({3, 2, 4}, {0, 0, 1, 1, 1, 1});
  h0_.Reshape({1, 2, 2});
  c0_.Reshape({2, 2});
  std::vector<Blob*> bottoms{&x_, &cont_, &h0_, &c0_}, tops{&top_, &h_last_, &c_last_};
  ExpectErrorContaining([&] { MakeLayer(LSTMText(2, true))->SetUp(bottoms, tops); },
                        {"LSTM layer 'lstm'", "initial state bottom 3 of shape 1 2 2", "got 2 2"});
  std::vector<Blob*> too_few{&x_, &cont_, &h0_};
  ExpectErrorContaining([&] { MakeLayer(LSTMText(2, true))->SetUp(too_few, tops); },
                        {"LSTM layer 'lstm'", "at least 4 bottom"});
  ExpectErrorContaining(
      [&] { MakeLayer("name: 'lstm' type: 'LSTM'")->SetUp(bottom_vec_, top_vec_); },
      {"LSTM layer 'lstm'", "num_output > 0"});

  LayerParameter param = ParseText<LayerParameter>(LSTMText(2));
  Blob w_xc({8, 4}), b_c({8}), w_hc({2, 8});
  w_xc.ToProto(param.add_blobs());
  b_c.ToProto(param.add_blobs());
  w_hc.ToProto(param.add_blobs());
  ExpectErrorContaining([&] { LayerRegistry::Create(param)->SetUp(bottom_vec_, top_vec_); },
                        {"LSTM layer 'lstm'", "param 2 of shape 8 2", "got 2 8"});
}

// An LSTM among planned layers: if it read in Backward what it declares it
// does not, the planned net would drift from the unplanned one. TanH after
// it reads only its own top, so the LSTM's output stays alive for its Backward
// only because it says it reads it.
TEST(LSTMNetTest, PlannedNetTrainsBitIdenticallyToUnplanned) {
  const char* text = R"(
    layer { name: "data" type: "DummyData" top: "x" top: "cont"
            dummy_data_param { shape { dim: 4 dim: 3 dim: 5 } shape { dim: 4 dim: 3 }
                               data_filler { type: "gaussian" }
                               data_filler { type: "constant" value: 1 } } }
    layer { name: "embed" type: "InnerProduct" bottom: "x" top: "e"
            inner_product_param { num_output: 6 axis: 2
                                  weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "lstm" type: "LSTM" bottom: "e" bottom: "cont" top: "h"
            recurrent_param { num_output: 4 weight_filler { type: "gaussian" std: 0.3 }
                              bias_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "squash" type: "TanH" bottom: "h" top: "t" }
    layer { name: "head" type: "InnerProduct" bottom: "t" top: "out" loss_weight: 1
            inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 } } }
  )";
  ExpectPlannedTrainingMatchesUnplanned(text);
}

}  // namespace
}  // namespace demi
