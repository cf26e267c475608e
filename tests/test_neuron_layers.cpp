// Tests of the small element-wise layers: ELU, Power, Exp, Log, AbsVal, BNLL,
// Threshold, Swish and Clip, one suite each.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "demi/layers/neuron_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kLn2 = std::log(2.0f);
const float kLn3 = std::log(3.0f);
const float kLn4 = std::log(4.0f);
const float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Pass {
  std::vector<float> y;
  std::vector<float> dx;
};

/// Runs the layer `text` forward on x, then backward with top gradient dy.
/// Between the two, the bottom data (poison_bottom) and the top data
/// (poison_top) are overwritten with NaN, which shows that Backward does not
/// read them; in place, bottom and top are one blob.
Pass RunLayer(const std::string& text, const std::vector<float>& x_values,
              const std::vector<float>& dy, bool in_place = false, bool poison_bottom = false,
              bool poison_top = false) {
  const int64_t n = static_cast<int64_t>(x_values.size());
  Blob x({n});
  FillValues(&x, x_values);
  Blob y;
  std::vector<Blob*> bottom{&x};
  std::vector<Blob*> top{in_place ? &x : &y};
  auto layer = MakeLayer(text);
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  Pass pass{DataOf(*top[0]), {}};
  if (poison_bottom) Set(n, kNaN, x.mutable_cpu_data());
  if (poison_top) Set(n, kNaN, top[0]->mutable_cpu_data());
  std::copy(dy.begin(), dy.end(), top[0]->mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);
  pass.dx = DiffOf(x);
  return pass;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected,
                float tolerance = 1e-6f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance * std::max(1.0f, std::fabs(expected[i])))
        << "element " << i;
  }
}

/// In place gives the same top and bottom gradient as out of place, on
/// Gaussian data; `poison` overwrites the in-place blob's data with NaN
/// before Backward (for layers that keep their own copy of the input).
void ExpectInPlaceMatches(const std::string& text, bool poison, float stddev = 1.0f) {
  Blob source({2, 3, 4, 5});
  FillGaussian(&source, 41, stddev);
  Blob gradient({2, 3, 4, 5});
  FillGaussian(&gradient, 42);
  const Pass out = RunLayer(text, DataOf(source), DataOf(gradient));
  const Pass in = RunLayer(text, DataOf(source), DataOf(gradient), true, poison, poison);
  EXPECT_EQ(in.y, out.y);
  EXPECT_EQ(in.dx, out.dx);
}

/// Finite-difference check on odd shapes, with inputs uniform in [lo, hi).
void CheckGradientOnShapes(const std::string& text, float lo, float hi, float stepsize = 1e-2f,
                           float kink = 0.0f, float kink_range = -1.0f) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {1}, {13}, {127}, {1, 13, 1, 1}}) {
    SCOPED_TRACE(ShapeString(shape));
    Blob x(shape);
    FillUniform(&x, 51, lo, hi);
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(text);
    GradientChecker checker(stepsize, 1e-3f, 1701, kink, kink_range);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

void ExpectSetUpError(const std::string& text, const std::vector<std::string>& parts) {
  Blob x({2, 3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(text);
  ExpectErrorContaining([&] { layer->SetUp(bottom, top); }, parts);
}

// ---- ELU ----

TEST(ELULayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "ELU")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // alpha (e^x - 1) with e^x = 1/4, 1/2; dy/dx = alpha e^x = y + alpha.
  const Pass pass = RunLayer(R"(type: "ELU" elu_param { alpha: 0.5 })", {-kLn4, -kLn2, 0, 1, 3},
                             {1, 2, 3, 4, -5}, false, true, false);
  ExpectNear(pass.y, {-0.375f, -0.25f, 0, 1, 3});
  ExpectNear(pass.dx, {0.125f, 0.5f, 1.5f, 4, -5});
  // The default alpha is 1; alpha 0 is a ReLU.
  ExpectNear(RunLayer(R"(type: "ELU")", {-kLn2, 2}, {1, 1}).y, {-0.5f, 2});
  const Pass relu = RunLayer(R"(type: "ELU" elu_param { alpha: 0 })", {-kLn2, 2}, {3, 3});
  ExpectNear(relu.y, {0, 2});
  ExpectNear(relu.dx, {0, 3});
}

TEST(ELULayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "ELU" elu_param { alpha: 0.7 })", false);
  CheckGradientOnShapes(R"(type: "ELU")", -2, 2, 1e-3f, 0.0f, 0.01f);
  CheckGradientOnShapes(R"(type: "ELU" elu_param { alpha: 0.3 })", -3, 1, 1e-3f, 0.0f, 0.01f);
}

TEST(ELULayerTest, NegativeAlphaIsAnError) {
  ExpectSetUpError(R"(name: "elu" type: "ELU" elu_param { alpha: -1 })",
                   {"ELU layer 'elu'", "non-negative elu_param.alpha, got -1"});
}

// ---- Power ----

TEST(PowerLayerTest, SquareMatchesHandComputed) {
  const std::string text = R"(type: "Power" power_param { power: 2 scale: 3 shift: 1 })";
  auto layer = MakeLayer(text);
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  // shift + scale x = -2, 1, 2.5, 7; dy/dx = 2 * 3 * (shift + scale x).
  const Pass pass = RunLayer(text, {-1, 0, 0.5f, 2}, {1, 1, 1, 2}, false, false, true);
  ExpectNear(pass.y, {4, 1, 6.25f, 49});
  ExpectNear(pass.dx, {-12, 6, 15, 84});
}

TEST(PowerLayerTest, SquareRootAndDefaultsMatchHandComputed) {
  const Pass root =
      RunLayer(R"(type: "Power" power_param { power: 0.5 })", {4, 9, 0.25f}, {1, 3, 1});
  ExpectNear(root.y, {2, 3, 0.5f});
  ExpectNear(root.dx, {0.25f, 0.5f, 1});  // 1 / (2 sqrt(x))
  const Pass identity = RunLayer(R"(type: "Power")", {-1.5f, 2}, {4, 5});
  ExpectNear(identity.y, {-1.5f, 2});
  ExpectNear(identity.dx, {4, 5});
}

TEST(PowerLayerTest, ConstantDerivativeReadsNoData) {
  for (const char* text : {R"(type: "Power" power_param { scale: 0.5 shift: 2 })",
                           R"(type: "Power" power_param { power: 0 scale: 2 })",
                           R"(type: "Power" power_param { power: 3 scale: 0 shift: 2 })"}) {
    SCOPED_TRACE(text);
    auto layer = MakeLayer(text);
    EXPECT_FALSE(layer->BackwardReadsBottomData(0));
    EXPECT_FALSE(layer->BackwardReadsTopData(0));
  }
  const Pass affine = RunLayer(R"(type: "Power" power_param { scale: 0.5 shift: 2 })", {-2, 4},
                               {1, -2}, false, true, true);
  ExpectNear(affine.y, {1, 4});
  ExpectNear(affine.dx, {0.5f, -1});
  const Pass one = RunLayer(R"(type: "Power" power_param { power: 0 scale: 2 })", {-2, 4}, {1, -2},
                            false, true, true);
  ExpectNear(one.y, {1, 1});
  ExpectNear(one.dx, {0, 0});
  const Pass cube = RunLayer(R"(type: "Power" power_param { power: 3 scale: 0 shift: 2 })", {-2, 4},
                             {1, -2}, true, true, true);
  ExpectNear(cube.y, {8, 8});
  ExpectNear(cube.dx, {0, 0});
}

TEST(PowerLayerTest, InPlaceKeepsACopyOnlyWhenTheDerivativeVaries) {
  Blob x({3});
  std::vector<Blob*> blobs{&x};
  auto square = MakeLayer(R"(type: "Power" power_param { power: 2 })");
  square->SetUp(blobs, blobs);
  EXPECT_FALSE(square->BackwardReadsBottomData(0));
  ASSERT_EQ(square->buffers().size(), 1u);
  EXPECT_EQ(square->buffers()[0].name, "bottom_copy");
  EXPECT_EQ(square->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(square->buffers()[0].blob->count(), 3);
  auto affine = MakeLayer(R"(type: "Power" power_param { scale: 2 })");
  affine->SetUp(blobs, blobs);
  EXPECT_TRUE(affine->buffers().empty());
  Blob y;
  std::vector<Blob*> top{&y};
  auto out_of_place = MakeLayer(R"(type: "Power" power_param { power: 2 })");
  out_of_place->SetUp(blobs, top);
  EXPECT_TRUE(out_of_place->buffers().empty());

  ExpectInPlaceMatches(R"(type: "Power" power_param { power: 2 scale: -0.5 shift: 0.25 })", true);
  ExpectInPlaceMatches(R"(type: "Power" power_param { power: 1 scale: -0.5 shift: 0.25 })", true);
}

TEST(PowerLayerTest, Gradient) {
  CheckGradientOnShapes(R"(type: "Power" power_param { power: 2 scale: 3 shift: 1 })", -1, 1);
  CheckGradientOnShapes(R"(type: "Power" power_param { power: 3 scale: -0.5 shift: 0.2 })", -2, 2);
  CheckGradientOnShapes(R"(type: "Power" power_param { power: 0.5 })", 0.5f, 2);
  CheckGradientOnShapes(R"(type: "Power" power_param { power: -1.5 shift: 3 })", -1, 1);
  CheckGradientOnShapes(R"(type: "Power" power_param { scale: 0.5 shift: 2 })", -1, 1);
}

// ---- Exp ----

TEST(ExpLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "Exp")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // 2^(1 + x); dy/dx = y ln 2.
  const Pass base2 = RunLayer(R"(type: "Exp" exp_param { base: 2 shift: 1 })", {0, 1, -1, 2},
                              {1, 1, 2, 0.5f}, false, true, false);
  ExpectNear(base2.y, {2, 4, 1, 8});
  ExpectNear(base2.dx, {2 * kLn2, 4 * kLn2, 2 * kLn2, 4 * kLn2});
  // e^(2x): e^(ln 3) = 3; dy/dx = 2 y.
  const Pass natural = RunLayer(R"(type: "Exp" exp_param { scale: 2 })", {0, kLn3 / 2, -kLn2 / 2},
                                {1, 1, 1}, false, true, false);
  ExpectNear(natural.y, {1, 3, 0.5f});
  ExpectNear(natural.dx, {2, 6, 1});
}

TEST(ExpLayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "Exp" exp_param { base: 3 scale: -0.5 shift: 0.2 })", false);
  CheckGradientOnShapes(R"(type: "Exp")", -2, 2, 1e-3f);
  CheckGradientOnShapes(R"(type: "Exp" exp_param { base: 0.5 scale: 1.5 shift: -1 })", -2, 2,
                        1e-3f);
}

TEST(ExpLayerTest, BadBaseIsAnError) {
  ExpectSetUpError(R"(name: "exp" type: "Exp" exp_param { base: -2 })",
                   {"Exp layer 'exp'", "exp_param.base > 0 (or -1 for e), got -2"});
  ExpectSetUpError(R"(name: "exp" type: "Exp" exp_param { base: 0 })", {"got 0"});
}

// ---- Log ----

TEST(LogLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "Log")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // log2(1 + 2x) of 1, 2, 4, 8; dy/dx = 2 / ((1 + 2x) ln 2).
  const Pass base2 = RunLayer(R"(type: "Log" log_param { base: 2 scale: 2 shift: 1 })",
                              {0, 0.5f, 1.5f, 3.5f}, {1, 1, 1, 1}, false, true, false);
  ExpectNear(base2.y, {0, 1, 2, 3});
  ExpectNear(base2.dx, {2 / kLn2, 1 / kLn2, 0.5f / kLn2, 0.25f / kLn2}, 1e-5f);
  const Pass natural = RunLayer(R"(type: "Log")", {1, 4, 0.25f}, {1, 2, 1}, false, true, false);
  ExpectNear(natural.y, {0, kLn4, -kLn4});
  ExpectNear(natural.dx, {1, 0.5f, 4}, 1e-5f);
}

TEST(LogLayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "Log" log_param { shift: 20 })", false);
  CheckGradientOnShapes(R"(type: "Log")", 0.5f, 3, 1e-3f);
  CheckGradientOnShapes(R"(type: "Log" log_param { base: 10 scale: 3 shift: 2 })", 0, 1, 1e-3f);
  CheckGradientOnShapes(R"(type: "Log" log_param { base: 0.5 scale: -1 shift: 2 })", -1, 1, 1e-3f);
}

TEST(LogLayerTest, BadBaseIsAnError) {
  ExpectSetUpError(R"(name: "log" type: "Log" log_param { base: 1 })",
                   {"Log layer 'log'", "log_param.base > 0 and != 1 (or -1 for e), got 1"});
  ExpectSetUpError(R"(name: "log" type: "Log" log_param { base: -3 })", {"got -3"});
}

// ---- AbsVal ----

TEST(AbsValLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheBottom) {
  auto layer = MakeLayer(R"(type: "AbsVal")");
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  const Pass pass =
      RunLayer(R"(type: "AbsVal")", {-2, -0.5f, 0, 1, 3}, {1, 2, 3, 4, 5}, false, false, true);
  ExpectNear(pass.y, {2, 0.5f, 0, 1, 3});
  ExpectNear(pass.dx, {-1, -2, 0, 4, 5});
}

TEST(AbsValLayerTest, InPlaceKeepsACopyOfTheInput) {
  Blob x({5});
  std::vector<Blob*> blobs{&x};
  auto layer = MakeLayer(R"(type: "AbsVal")");
  layer->SetUp(blobs, blobs);
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  const Pass pass =
      RunLayer(R"(type: "AbsVal")", {-2, -0.5f, 0, 1, 3}, {1, 2, 3, 4, 5}, true, true, true);
  ExpectNear(pass.y, {2, 0.5f, 0, 1, 3});
  ExpectNear(pass.dx, {-1, -2, 0, 4, 5});
  ExpectInPlaceMatches(R"(type: "AbsVal")", true);
}

TEST(AbsValLayerTest, Gradient) {
  CheckGradientOnShapes(R"(type: "AbsVal")", -2, 2, 1e-3f, 0.0f, 0.01f);
}

// ---- BNLL ----

TEST(BNLLLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  auto layer = MakeLayer(R"(type: "BNLL")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // log(1 + e^x) for e^x = 1, 3, 1/3; +-40 neither overflow nor lose the
  // tiny value e^-40 = 4.2483543e-18. dy/dx = sigmoid(x) = 1/2, 3/4, 1/4, 1, e^-40.
  const Pass pass =
      RunLayer(R"(type: "BNLL")", {0, kLn3, -kLn3, 40, -40}, {1, 1, 2, 3, 1}, false, true, false);
  ExpectNear(pass.y, {kLn2, kLn4, std::log(4.0f / 3.0f), 40, 4.2483543e-18f}, 1e-6f);
  EXPECT_NEAR(pass.y[4], 4.2483543e-18f, 1e-24f);
  ExpectNear(pass.dx, {0.5f, 0.75f, 0.5f, 3, 4.2483543e-18f}, 1e-6f);
  EXPECT_NEAR(pass.dx[4], 4.2483543e-18f, 1e-24f);
}

TEST(BNLLLayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "BNLL")", false, 3.0f);
  CheckGradientOnShapes(R"(type: "BNLL")", -4, 4);
}

// ---- Threshold ----

TEST(ThresholdLayerTest, ForwardMatchesHandComputed) {
  Blob x({5});
  FillValues(&x, {0.4f, 0.5f, 0.6f, -1, 7});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto at_half = MakeLayer(R"(type: "Threshold" threshold_param { threshold: 0.5 })");
  at_half->SetUp(bottom, top);
  at_half->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), (std::vector<float>{0, 0, 1, 0, 1}));
  Blob z({1, 3});
  FillValues(&z, {-0.1f, 0, 0.1f});
  std::vector<Blob*> blobs{&z};
  auto layer = MakeLayer(R"(type: "Threshold")");
  layer->SetUp(blobs, blobs);
  layer->Forward(blobs, blobs);
  EXPECT_EQ(DataOf(z), (std::vector<float>{0, 0, 1}));
}

TEST(ThresholdLayerTest, HasNoGradient) {
  auto layer = MakeLayer(R"(name: "step" type: "Threshold")");
  EXPECT_FALSE(layer->AllowForceBackward(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  Blob x({3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  Set(3, 7.0f, x.mutable_cpu_diff());
  layer->Backward(top, {false}, bottom);
  EXPECT_EQ(DiffOf(x), (std::vector<float>{7, 7, 7}));
  ExpectErrorContaining([&] { layer->Backward(top, {true}, bottom); },
                        {"Threshold layer 'step'", "not differentiable"});
}

// ---- Swish ----

TEST(SwishLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheBottom) {
  auto layer = MakeLayer(R"(type: "Swish")");
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  // sigmoid(+-ln 3) = 3/4, 1/4; dy/dx = s + beta x s (1 - s) with s (1 - s) = 3/16.
  const Pass pass = RunLayer(R"(type: "Swish")", {0, kLn3, -kLn3}, {1, 1, 2}, false, false, true);
  ExpectNear(pass.y, {0, 0.75f * kLn3, -0.25f * kLn3});
  ExpectNear(pass.dx, {0.5f, 0.75f + 0.1875f * kLn3, 2 * (0.25f - 0.1875f * kLn3)});
  // beta 2: sigmoid(2 * ln(3) / 2) = 3/4.
  const Pass beta = RunLayer(R"(type: "Swish" swish_param { beta: 2 })", {kLn3 / 2}, {1});
  ExpectNear(beta.y, {0.375f * kLn3});
  ExpectNear(beta.dx, {0.75f + 0.1875f * kLn3});
}

TEST(SwishLayerTest, InPlaceKeepsACopyOfTheInput) {
  Blob x({5});
  std::vector<Blob*> blobs{&x};
  auto layer = MakeLayer(R"(type: "Swish")");
  layer->SetUp(blobs, blobs);
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  ExpectInPlaceMatches(R"(type: "Swish" swish_param { beta: 0.7 })", true, 2.0f);
}

TEST(SwishLayerTest, Gradient) {
  CheckGradientOnShapes(R"(type: "Swish")", -4, 4);
  CheckGradientOnShapes(R"(type: "Swish" swish_param { beta: 2.5 })", -3, 3, 1e-3f);
}

// ---- Clip ----

TEST(ClipLayerTest, ForwardAndBackwardMatchHandComputedReadingOnlyTheTop) {
  const std::string text = R"(type: "Clip" clip_param { min: -1 max: 2 })";
  auto layer = MakeLayer(text);
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  // The gradient passes strictly inside (min, max) only, also at x = min, max.
  const Pass pass =
      RunLayer(text, {-3, -1, 0.5f, 2, 5, 1.99f}, {1, 2, 3, 4, 5, 6}, false, true, false);
  ExpectNear(pass.y, {-1, -1, 0.5f, 2, 2, 1.99f});
  ExpectNear(pass.dx, {0, 0, 3, 0, 0, 6});
}

TEST(ClipLayerTest, InPlaceAndGradient) {
  ExpectInPlaceMatches(R"(type: "Clip" clip_param { min: 0 max: 6 })", false, 4.0f);
  // Inputs in [-3, 9) with none within 0.02 of min 0 or max 6.
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {1}, {13}, {127}, {1, 13, 1, 1}}) {
    SCOPED_TRACE(ShapeString(shape));
    Blob x(shape);
    FillUniform(&x, 61, -3, 9);
    float* data = x.mutable_cpu_data();
    for (int64_t i = 0; i < x.count(); ++i) {
      if (std::fabs(data[i]) < 0.02f || std::fabs(data[i] - 6) < 0.02f) data[i] += 0.05f;
    }
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(R"(type: "Clip" clip_param { min: 0 max: 6 })");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

TEST(ClipLayerTest, MissingOrInvertedBoundsAreErrors) {
  ExpectSetUpError(R"(name: "clip" type: "Clip" clip_param { min: 0 })",
                   {"Clip layer 'clip'", "clip_param { min max } with min < max", "max 0 (unset)"});
  ExpectSetUpError(R"(name: "clip" type: "Clip" clip_param { min: 3 max: 3 })",
                   {"Clip layer 'clip'", "got min 3 and max 3"});
  ExpectSetUpError(R"(name: "clip" type: "Clip")", {"min 0 (unset) and max 0 (unset)"});
}

}  // namespace
}  // namespace demi
