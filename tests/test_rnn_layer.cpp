#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "demi/layers/rnn_layer.hpp"
#include "demi/net.hpp"
#include "gradient_checker.hpp"
#include "net_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

constexpr const char* kFillers =
    R"(weight_filler { type: "uniform" min: -0.5 max: 0.5 }
       bias_filler { type: "uniform" min: -0.5 max: 0.5 })";

std::string RNNText(int num_output, bool expose_hidden = false) {
  return StrCat("name: 'rnn' type: 'RNN' recurrent_param { num_output: ", num_output,
                expose_hidden ? " expose_hidden: true " : " ", kFillers, " }");
}

class RNNLayerTest : public ::testing::Test {
 protected:
  /// x of `x_shape` (Gaussian), cont of T x N with `cont` values.
  void SetInputs(const std::vector<int64_t>& x_shape, const std::vector<float>& cont) {
    x_.Reshape(x_shape);
    FillGaussian(&x_, 3);
    cont_.Reshape({x_shape[0], x_shape[1]});
    FillValues(&cont_, cont);
  }

  /// Sets W_xh, b_h, W_hh, W_ho, b_o of a 1-unit layer over 1 input value.
  static void SetScalarParams(Layer* layer) {
    const auto& p = layer->blobs();
    FillValues(p[0].get(), {0.5f});   // W_xh
    FillValues(p[1].get(), {0.1f});   // b_h
    FillValues(p[2].get(), {-0.8f});  // W_hh
    FillValues(p[3].get(), {1.5f});   // W_ho
    FillValues(p[4].get(), {-0.2f});  // b_o
  }

  Blob x_, cont_, static_, h0_;
  Blob top_, h_last_;
  std::vector<Blob*> bottom_vec_{&x_, &cont_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(RNNLayerTest, ShapesParamsAndBuffers) {
  SetInputs({3, 2, 4, 1}, {0, 0, 1, 1, 1, 0});
  auto layer = MakeLayer(RNNText(5));
  layer->SetUp(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{3, 2, 5}));
  ASSERT_EQ(layer->blobs().size(), 5u);  // W_xh, b_h, W_hh, W_ho, b_o
  const std::vector<std::vector<int64_t>> shapes{{5, 4}, {5}, {5, 5}, {5, 5}, {5}};
  for (size_t i = 0; i < shapes.size(); ++i) EXPECT_EQ(layer->blobs()[i]->shape(), shapes[i]);
  ASSERT_EQ(layer->buffers().size(), 5u);
  const std::vector<std::string> names{"gates", "gates_diff", "step_rows", "initial_hidden",
                                       "output_diff"};
  const std::vector<BufferLifetime> lifetimes{
      BufferLifetime::kSavedForBackward, BufferLifetime::kScratch, BufferLifetime::kScratch,
      BufferLifetime::kSavedForBackward, BufferLifetime::kScratch};
  const std::vector<std::vector<int64_t>> buffer_shapes{
      {3, 2, 5}, {3, 2, 5}, {2, 5}, {2, 5}, {3, 2, 5}};
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(layer->buffers()[i].name, names[i]);
    EXPECT_EQ(layer->buffers()[i].lifetime, lifetimes[i]) << names[i];
    EXPECT_EQ(layer->buffers()[i].blob->shape(), buffer_shapes[i]) << names[i];
  }
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsBottomData(1));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  EXPECT_TRUE(layer->AllowForceBackward(0));

  // A static input adds W_x_static after b_h; expose_hidden adds h_0 and h_T.
  static_.Reshape({2, 3, 2});
  h0_.Reshape({1, 2, 5});
  std::vector<Blob*> bottoms{&x_, &cont_, &static_, &h0_}, tops{&top_, &h_last_};
  auto full = MakeLayer(RNNText(5, true));
  full->SetUp(bottoms, tops);
  ASSERT_EQ(full->blobs().size(), 6u);
  const std::vector<std::vector<int64_t>> full_shapes{{5, 4}, {5}, {5, 6}, {5, 5}, {5, 5}, {5}};
  for (size_t i = 0; i < full_shapes.size(); ++i) {
    EXPECT_EQ(full->blobs()[i]->shape(), full_shapes[i]);
  }
  EXPECT_EQ(h_last_.shape(), (std::vector<int64_t>{1, 2, 5}));
  EXPECT_TRUE(full->BackwardReadsBottomData(2));   // x_static, for dW_x_static
  EXPECT_FALSE(full->BackwardReadsBottomData(3));  // h_0 is copied in Forward
  EXPECT_FALSE(full->BackwardReadsTopData(1));
}

TEST_F(RNNLayerTest, ForwardByHandTwoSteps) {
  x_.Reshape({2, 1, 1});
  FillValues(&x_, {1, -2});
  cont_.Reshape({2, 1});
  FillValues(&cont_, {0, 1});
  auto layer = MakeLayer(RNNText(1));
  layer->SetUp(bottom_vec_, top_vec_);
  SetScalarParams(layer.get());
  layer->Forward(bottom_vec_, top_vec_);
  // h_0 = tanh(0.5 * 1 + 0.1) = 0.537049567
  // h_1 = tanh(0.5 * -2 + 0.1 - 0.8 * h_0) = tanh(-1.329639654) = -0.869161235
  // o_t = tanh(1.5 h_t - 0.2): 0.541004271, -0.905822146
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 1, 1}));
  ExpectNear(DataOf(top_), {0.541004271f, -0.905822146f});
  ExpectNear(DataOf(*layer->buffers()[0].blob), {0.537049567f, -0.869161235f});
}

TEST_F(RNNLayerTest, ForwardByHandStaticInput) {
  x_.Reshape({1, 1, 1});
  FillValues(&x_, {1});
  cont_.Reshape({1, 1});
  FillValues(&cont_, {0});
  static_.Reshape({1, 1});
  FillValues(&static_, {2});
  std::vector<Blob*> bottoms{&x_, &cont_, &static_};
  auto layer = MakeLayer(RNNText(1));
  layer->SetUp(bottoms, top_vec_);
  const auto& p = layer->blobs();
  FillValues(p[0].get(), {0.5f});   // W_xh
  FillValues(p[1].get(), {0.1f});   // b_h
  FillValues(p[2].get(), {0.25f});  // W_x_static
  FillValues(p[3].get(), {-0.8f});  // W_hh
  FillValues(p[4].get(), {1.5f});   // W_ho
  FillValues(p[5].get(), {-0.2f});  // b_o
  layer->Forward(bottoms, top_vec_);
  // h = tanh(0.5 + 0.1 + 0.25 * 2) = tanh(1.1) = 0.800499022; o = tanh(1.5 h - 0.2).
  ExpectNear(DataOf(top_), {0.761908341f});
}

TEST_F(RNNLayerTest, ForwardByHandExposedHidden) {
  x_.Reshape({1, 1, 1});
  FillValues(&x_, {1});
  cont_.Reshape({1, 1});
  FillValues(&cont_, {1});
  h0_.Reshape({1, 1, 1});
  FillValues(&h0_, {0.4f});
  std::vector<Blob*> bottoms{&x_, &cont_, &h0_}, tops{&top_, &h_last_};
  auto layer = MakeLayer(RNNText(1, true));
  layer->SetUp(bottoms, tops);
  SetScalarParams(layer.get());
  layer->Forward(bottoms, tops);
  // h = tanh(0.5 + 0.1 - 0.8 * 0.4) = tanh(0.28) = 0.272905081; o = tanh(1.5 h - 0.2).
  ExpectNear(DataOf(h_last_), {0.272905081f});
  ExpectNear(DataOf(top_), {0.206351555f});
  // cont 0 drops h_0: h = tanh(0.6).
  FillValues(&cont_, {0});
  layer->Forward(bottoms, tops);
  ExpectNear(DataOf(h_last_), {0.537049567f});
}

TEST_F(RNNLayerTest, CarriesTheHiddenStateAcrossBatches) {
  // Two batches of 3 steps with cont 1 at the second batch's start equal one
  // batch of 6 steps.
  SetInputs({6, 2, 3}, {0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1});
  auto whole = MakeLayer(RNNText(4));
  whole->SetUp(bottom_vec_, top_vec_);
  whole->Forward(bottom_vec_, top_vec_);
  const std::vector<float> expected = DataOf(top_);

  LayerParameter param = ParseText<LayerParameter>(RNNText(4));
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

TEST_F(RNNLayerTest, GradientThroughTimeWithRestarts) {
  // Stream 0 restarts at t = 3, stream 1 at t = 2.
  SetInputs({5, 2, 3}, {0, 0, 1, 1, 1, 0, 0, 1, 1, 1});
  auto layer = MakeLayer(RNNText(4));
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_, 0);
}

TEST_F(RNNLayerTest, GradientOddShapes) {
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{1, 1, 1}, {4, 3, 2, 2}, {2, 1, 13}}) {
    std::vector<float> cont(static_cast<size_t>(shape[0] * shape[1]), 1.0f);
    for (int64_t n = 0; n < shape[1]; ++n) cont[n] = 0.0f;
    SetInputs(shape, cont);
    auto layer = MakeLayer(RNNText(shape[0] == 4 ? 1 : 3));
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom_vec_, top_vec_, 0);
  }
}

TEST_F(RNNLayerTest, GradientStaticInput) {
  SetInputs({4, 3, 2}, {0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1});
  static_.Reshape({3, 5});
  FillGaussian(&static_, 4);
  std::vector<Blob*> bottoms{&x_, &cont_, &static_};
  auto layer = MakeLayer(RNNText(3));
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottoms, top_vec_, 2);
  checker.CheckGradient(layer.get(), bottoms, top_vec_, 0);
}

TEST_F(RNNLayerTest, GradientExposedHidden) {
  // cont 1 at t = 0 for stream 1: h_0 reaches the output; stream 0 drops it.
  SetInputs({4, 2, 3}, {0, 1, 1, 1, 1, 0, 1, 1});
  static_.Reshape({2, 2});
  FillGaussian(&static_, 5);
  h0_.Reshape({1, 2, 3});
  FillGaussian(&h0_, 6);
  std::vector<Blob*> bottoms{&x_, &cont_, &static_, &h0_}, tops{&top_, &h_last_};
  auto layer = MakeLayer(RNNText(3, true));
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottoms, tops, 3);
  // Stream 0's h_0 is dropped by cont = 0; stream 1's is used.
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(h0_.cpu_diff()[i], 0.0f);
  EXPECT_GT(h0_.asum_diff(), 1e-3);
  checker.CheckGradient(layer.get(), bottoms, tops, 0);
}

TEST_F(RNNLayerTest, BackwardWritesBottomsAndAccumulatesParams) {
  SetInputs({3, 2, 3}, {0, 0, 1, 0, 1, 1});
  h0_.Reshape({1, 2, 4});
  FillGaussian(&h0_, 7);
  std::vector<Blob*> bottoms{&x_, &cont_, &h0_}, tops{&top_, &h_last_};
  auto layer = MakeLayer(RNNText(4, true));
  layer->SetUp(bottoms, tops);
  layer->Forward(bottoms, tops);
  Blob dy(top_.shape()), dh_last(h_last_.shape());
  FillGaussian(&dy, 8);
  FillGaussian(&dh_last, 9);
  Copy(dy.count(), dy.cpu_data(), top_.mutable_cpu_diff());
  Copy(dh_last.count(), dh_last.cpu_data(), h_last_.mutable_cpu_diff());
  Set(h_last_.count(), kNaN, h_last_.mutable_cpu_data());  // Backward must not read it
  Set(h0_.count(), kNaN, h0_.mutable_cpu_data());          // copied in Forward
  Set(x_.count(), kNaN, x_.mutable_cpu_diff());            // written, not accumulated
  Set(h0_.count(), kNaN, h0_.mutable_cpu_diff());
  Set(cont_.count(), 5.0f, cont_.mutable_cpu_diff());  // never written
  for (auto& param : layer->blobs()) Set(param->count(), 0.0f, param->mutable_cpu_diff());
  layer->Backward(tops, {true, false, true}, bottoms);
  const std::vector<float> dx = DiffOf(x_), dh0 = DiffOf(h0_);
  for (float v : dx) ASSERT_TRUE(std::isfinite(v));
  for (float v : dh0) ASSERT_TRUE(std::isfinite(v));
  for (float v : DiffOf(cont_)) EXPECT_EQ(v, 5.0f);
  std::vector<std::vector<float>> grads;
  for (auto& param : layer->blobs()) grads.push_back(DiffOf(*param));
  layer->Backward(tops, {true, false, true}, bottoms);
  ExpectNear(DiffOf(x_), dx);
  ExpectNear(DiffOf(h0_), dh0);
  for (size_t i = 0; i < grads.size(); ++i) {
    const std::vector<float> again = DiffOf(*layer->blobs()[i]);
    for (size_t k = 0; k < again.size(); ++k) EXPECT_NEAR(again[k], 2 * grads[i][k], 1e-5);
  }
}

TEST_F(RNNLayerTest, PropagateDownFlagsAreRespected) {
  SetInputs({2, 2, 3}, {0, 0, 1, 1});
  auto layer = MakeLayer(RNNText(2));
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  Set(top_.count(), 1.0f, top_.mutable_cpu_diff());
  Set(x_.count(), 42.0f, x_.mutable_cpu_diff());
  for (auto& param : layer->blobs()) Set(param->count(), 0.0f, param->mutable_cpu_diff());
  for (int i = 0; i < 4; ++i) layer->set_param_propagate_down(i, false);
  layer->Backward(top_vec_, {false, false}, bottom_vec_);
  for (float v : DiffOf(x_)) EXPECT_EQ(v, 42.0f);
  for (int i = 0; i < 4; ++i) {
    for (float v : DiffOf(*layer->blobs()[i])) EXPECT_EQ(v, 0.0f) << "param " << i;
  }
  // b_o still learns: each of the 2 x 2 outputs contributes 1 - o^2.
  double expected = 0;
  for (float o : DataOf(top_)) expected += 1.0 - double(o) * o;
  const std::vector<float> db_o = DiffOf(*layer->blobs()[4]);
  EXPECT_NEAR(db_o[0] + db_o[1], expected, 1e-5);

  ExpectErrorContaining(
      [&] {
        layer->Backward(top_vec_, {true, true}, bottom_vec_);
      },
      {"RNN layer 'rnn'", "cannot backpropagate", "continuation", "bottom 1"});
}

TEST_F(RNNLayerTest, BadSettingsAndShapesNameTheLayer) {
  SetInputs({3, 2, 4}, {0, 0, 1, 1, 1, 1});
  auto setup = [&](const std::string& text, const std::vector<Blob*>& bottoms,
                   const std::vector<Blob*>& tops) { MakeLayer(text)->SetUp(bottoms, tops); };
  ExpectErrorContaining(
      [&] { setup("name: 'rnn' type: 'RNN' recurrent_param { }", bottom_vec_, top_vec_); },
      {"RNN layer 'rnn'", "num_output > 0"});
  cont_.Reshape({2, 3});
  ExpectErrorContaining([&] { setup(RNNText(2), bottom_vec_, top_vec_); },
                        {"RNN layer 'rnn'", "cont (bottom 1) of shape 3 2", "got 2 3"});
  cont_.Reshape({3, 2});
  static_.Reshape({3, 4});
  std::vector<Blob*> with_static{&x_, &cont_, &static_};
  ExpectErrorContaining([&] { setup(RNNText(2), with_static, top_vec_); },
                        {"RNN layer 'rnn'", "x_static (bottom 2)", "N = 2", "got 3 4"});
  h0_.Reshape({1, 2, 3});
  std::vector<Blob*> exposed{&x_, &cont_, &h0_}, tops{&top_, &h_last_};
  ExpectErrorContaining([&] { setup(RNNText(2, true), exposed, tops); },
                        {"RNN layer 'rnn'", "initial state bottom 2 of shape 1 2 2", "got 1 2 3"});
  x_.Reshape({6});
  ExpectErrorContaining([&] { setup(RNNText(2), bottom_vec_, top_vec_); },
                        {"RNN layer 'rnn'", "T x N x ...", "got 6"});

  // The input size is fixed at set-up.
  SetInputs({3, 2, 4}, {0, 0, 1, 1, 1, 1});
  auto layer = MakeLayer(RNNText(2));
  layer->SetUp(bottom_vec_, top_vec_);
  x_.Reshape({3, 2, 5});
  ExpectErrorContaining([&] { layer->Reshape(bottom_vec_, top_vec_); },
                        {"RNN layer 'rnn'", "4 values per step", "got 3 2 5"});

  // Preloaded params must match in number and shape.
  x_.Reshape({3, 2, 4});
  LayerParameter param = ParseText<LayerParameter>(RNNText(2));
  Blob w_xh({2, 4}), b_h({2}), w_hh({2, 3});
  w_xh.ToProto(param.add_blobs());
  b_h.ToProto(param.add_blobs());
  ExpectErrorContaining([&] { LayerRegistry::Create(param)->SetUp(bottom_vec_, top_vec_); },
                        {"RNN layer 'rnn'", "2 preloaded param blobs", "expected 5"});
  w_hh.ToProto(param.add_blobs());
  w_hh.ToProto(param.add_blobs());
  b_h.ToProto(param.add_blobs());
  ExpectErrorContaining([&] { LayerRegistry::Create(param)->SetUp(bottom_vec_, top_vec_); },
                        {"RNN layer 'rnn'", "param 2 of shape 2 2", "got 2 3"});
}

// An RNN among planned layers: if it read in Backward what it declares it
// does not, the planned net would drift from the unplanned one. TanH after
// it reads only its own top, so the RNN's output stays alive for its Backward
// only because it says it reads it.
TEST(RNNNetTest, PlannedNetTrainsBitIdenticallyToUnplanned) {
  const char* text = R"(
    layer { name: "data" type: "DummyData" top: "x" top: "cont"
            dummy_data_param { shape { dim: 4 dim: 3 dim: 5 } shape { dim: 4 dim: 3 }
                               data_filler { type: "gaussian" }
                               data_filler { type: "constant" value: 1 } } }
    layer { name: "embed" type: "InnerProduct" bottom: "x" top: "e"
            inner_product_param { num_output: 6 axis: 2
                                  weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "rnn" type: "RNN" bottom: "e" bottom: "cont" top: "h"
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
