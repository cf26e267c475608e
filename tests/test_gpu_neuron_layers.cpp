// GPU twins of the element-wise and broadcast layers against the CPU: the
// neuron layers (AbsVal, BNLL, Clip, ELU, Exp, Log, Power, ReLU, Sigmoid,
// Swish, TanH, Threshold, PReLU, Dropout), Bias, Scale, Eltwise, Silence and
// Split. Besides the out-of-place comparison of gpu_test_util.hpp, layers
// that may run in place are run so on the GPU, with the input overwritten
// before Backward where the layer keeps its own copy of it.
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.hpp"

namespace demi {
namespace {

using Fill = std::function<void(int index, Blob* bottom)>;

/// Gaussian values (seed 1000 + index) moved at least `margin` away from
/// every kink, so that a finite-difference step never crosses one.
Fill GaussianAwayFrom(std::vector<float> kinks, float margin = 0.05f, float stddev = 1.0f) {
  return [kinks = std::move(kinks), margin, stddev](int index, Blob* bottom) {
    FillGaussian(bottom, 1000 + static_cast<uint32_t>(index), stddev);
    float* x = bottom->mutable_cpu_data();
    for (int64_t i = 0; i < bottom->count(); ++i) {
      for (float kink : kinks) {
        if (std::fabs(x[i] - kink) < margin) x[i] = kink + std::copysign(margin, x[i] - kink);
      }
    }
  };
}

/// Gaussian values of deviation `stddev` (seed 1000 + index).
Fill Gaussian(float stddev) {
  return [stddev](int index, Blob* bottom) {
    FillGaussian(bottom, 1000 + static_cast<uint32_t>(index), stddev);
  };
}

/// Uniform values in [lo, hi) (seed 1000 + index).
Fill Uniform(float lo, float hi) {
  return [lo, hi](int index, Blob* bottom) {
    FillUniform(bottom, 1000 + static_cast<uint32_t>(index), lo, hi);
  };
}

GpuCase NewCase(const std::string& layer, std::vector<std::vector<int64_t>> bottoms,
                Fill fill = nullptr) {
  GpuCase c;
  c.layer = layer;
  c.bottoms = std::move(bottoms);
  c.fill = std::move(fill);
  return c;
}

/// The odd shapes every element-wise layer runs on: 1-D, 2-D and 4-D.
const std::vector<std::vector<int64_t>>& OddShapes() {
  static const std::vector<std::vector<int64_t>> shapes = {{1}, {127, 13}, {2, 3, 1, 13}};
  return shapes;
}

/// ExpectGpuMatchesCpu for a one-bottom layer on each of OddShapes().
void ExpectMatchesOnOddShapes(const std::string& layer, Fill fill = nullptr) {
  for (const std::vector<int64_t>& shape : OddShapes()) {
    SCOPED_TRACE(ShapeString(shape));
    ExpectGpuMatchesCpu(NewCase(layer, {shape}, fill));
  }
}

/// Runs the layer out of place on the CPU and in place (bottom and top one
/// blob) on the GPU: the tops, bottom gradients and param gradients must
/// agree. With `poison`, the GPU blob's data is overwritten with NaN before
/// Backward, which shows that the layer reads its own copy of the input.
void ExpectInPlaceGpuMatchesCpu(const std::string& text, const std::vector<int64_t>& shape,
                                Fill fill = nullptr, bool poison = false) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  Blob cpu_x(shape), cpu_y, gpu_x(shape);
  if (fill) {
    fill(0, &cpu_x);
  } else {
    FillGaussian(&cpu_x, 1000);
  }
  gpu_x.CopyFrom(cpu_x);
  std::vector<Blob*> cpu_bottom{&cpu_x}, cpu_top{&cpu_y}, gpu_blobs{&gpu_x};
  auto cpu_layer = MakeLayerOn(text, Device::kCPU);
  auto gpu_layer = MakeLayerOn(text, Device::kGPU);
  cpu_layer->SetUp(cpu_bottom, cpu_top);
  gpu_layer->SetUp(gpu_blobs, gpu_blobs);
  ASSERT_EQ(cpu_layer->blobs().size(), gpu_layer->blobs().size());
  for (size_t p = 0; p < cpu_layer->blobs().size(); ++p) {
    gpu_layer->blobs()[p]->CopyFrom(*cpu_layer->blobs()[p]);
    Set(cpu_layer->blobs()[p]->count(), 0.0f, cpu_layer->blobs()[p]->mutable_cpu_diff());
    Set(gpu_layer->blobs()[p]->count(), 0.0f, gpu_layer->blobs()[p]->mutable_cpu_diff());
  }

  cpu_layer->Forward(cpu_bottom, cpu_top);
  gpu_layer->Forward(gpu_blobs, gpu_blobs);
  ExpectClose(gpu_x, cpu_y, 1e-4f, "in-place top");

  Blob dy(shape);
  FillGaussian(&dy, 2000);
  Copy(dy.count(), dy.cpu_data(), cpu_y.mutable_cpu_diff());
  Copy(dy.count(), dy.cpu_data(), gpu_x.mutable_cpu_diff());
  if (poison) Set(gpu_x.count(), kNaN, gpu_x.mutable_cpu_data());
  cpu_layer->Backward(cpu_top, {true}, cpu_bottom);
  gpu_layer->Backward(gpu_blobs, {true}, gpu_blobs);
  ExpectCloseDiff(gpu_x, cpu_x, 1e-4f, "in-place bottom diff");
  for (size_t p = 0; p < cpu_layer->blobs().size(); ++p) {
    ExpectCloseDiff(*gpu_layer->blobs()[p], *cpu_layer->blobs()[p], 1e-4f,
                    StrCat("in-place param diff ", p));
  }
}

const std::vector<int64_t> kInPlaceShape = {2, 3, 5, 7};

// ---- Top-reading neuron layers: ReLU, Sigmoid, TanH, ELU, BNLL, Clip, Exp, Log ----

TEST(GpuReLULayerTest, PlainAndLeaky) {
  ExpectMatchesOnOddShapes("type: 'ReLU'", GaussianAwayFrom({0}));
  ExpectMatchesOnOddShapes("type: 'ReLU' relu_param { negative_slope: 0.1 }",
                           GaussianAwayFrom({0}));
}

TEST(GpuReLULayerTest, InPlace) {
  ExpectInPlaceGpuMatchesCpu("type: 'ReLU' relu_param { negative_slope: 0.2 }", kInPlaceShape);
}

TEST(GpuReLULayerTest, NegativeSlopeIsAnError) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  Blob x({3}), y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer =
      MakeLayerOn("name: 'r' type: 'ReLU' relu_param { negative_slope: -1 }", Device::kGPU);
  layer->SetUp(bottom, top);
  ExpectErrorContaining([&] { layer->Forward(bottom, top); },
                        {"ReLU layer 'r'", "non-negative negative_slope"});
}

TEST(GpuSigmoidLayerTest, OutOfPlaceAndInPlace) {
  ExpectMatchesOnOddShapes("type: 'Sigmoid'", Gaussian(3.0f));
  ExpectInPlaceGpuMatchesCpu("type: 'Sigmoid'", kInPlaceShape);
}

TEST(GpuTanHLayerTest, OutOfPlaceAndInPlace) {
  ExpectMatchesOnOddShapes("type: 'TanH'");
  ExpectInPlaceGpuMatchesCpu("type: 'TanH'", kInPlaceShape);
}

TEST(GpuELULayerTest, AlphaOptions) {
  ExpectMatchesOnOddShapes("type: 'ELU'", GaussianAwayFrom({0}));
  ExpectMatchesOnOddShapes("type: 'ELU' elu_param { alpha: 0.4 }", GaussianAwayFrom({0}));
  ExpectInPlaceGpuMatchesCpu("type: 'ELU' elu_param { alpha: 0.7 }", kInPlaceShape);
}

TEST(GpuBNLLLayerTest, WideInputs) {
  // Wide enough to reach both branches far from 0.
  ExpectMatchesOnOddShapes("type: 'BNLL'", Gaussian(4.0f));
  ExpectInPlaceGpuMatchesCpu("type: 'BNLL'", kInPlaceShape);
}

TEST(GpuClipLayerTest, BothBounds) {
  const std::string clip = "type: 'Clip' clip_param { min: -0.5 max: 0.8 }";
  ExpectMatchesOnOddShapes(clip, GaussianAwayFrom({-0.5f, 0.8f}));
  ExpectInPlaceGpuMatchesCpu(clip, kInPlaceShape, GaussianAwayFrom({-0.5f, 0.8f}));
}

TEST(GpuExpLayerTest, BaseScaleShift) {
  ExpectMatchesOnOddShapes("type: 'Exp'");
  ExpectMatchesOnOddShapes("type: 'Exp' exp_param { base: 2 scale: 0.5 shift: 1 }");
  ExpectInPlaceGpuMatchesCpu("type: 'Exp' exp_param { base: 3 scale: -0.7 shift: 0.2 }",
                             kInPlaceShape);
}

TEST(GpuLogLayerTest, BaseScaleShift) {
  ExpectMatchesOnOddShapes("type: 'Log'", Uniform(0.5f, 3.0f));
  // shift + scale x lies in [0.3, 2.4).
  const std::string log2 = "type: 'Log' log_param { base: 2 scale: 0.7 shift: -0.05 }";
  ExpectMatchesOnOddShapes(log2, Uniform(0.5f, 3.5f));
  ExpectInPlaceGpuMatchesCpu(log2, kInPlaceShape, Uniform(0.5f, 3.5f));
}

// ---- Input-reading neuron layers: AbsVal, Power, Swish ----

TEST(GpuAbsValLayerTest, OutOfPlaceAndInPlace) {
  ExpectMatchesOnOddShapes("type: 'AbsVal'", GaussianAwayFrom({0}));
  ExpectInPlaceGpuMatchesCpu("type: 'AbsVal'", kInPlaceShape, GaussianAwayFrom({0}), true);
}

TEST(GpuPowerLayerTest, VaryingDerivative) {
  ExpectMatchesOnOddShapes("type: 'Power' power_param { power: 2 scale: 0.5 shift: 1 }");
  // A fractional power on a positive base: shift + scale x in [1.2, 3).
  const std::string root = "type: 'Power' power_param { power: 0.5 scale: 0.6 shift: 0.9 }";
  ExpectMatchesOnOddShapes(root, Uniform(0.5f, 3.5f));
  ExpectInPlaceGpuMatchesCpu(root, kInPlaceShape, Uniform(0.5f, 3.5f), true);
  ExpectInPlaceGpuMatchesCpu("type: 'Power' power_param { power: 3 scale: -1.5 shift: 0.5 }",
                             kInPlaceShape, nullptr, true);
}

TEST(GpuPowerLayerTest, ConstantDerivative) {
  ExpectMatchesOnOddShapes("type: 'Power' power_param { power: 1 scale: 3 shift: -1 }");
  ExpectMatchesOnOddShapes("type: 'Power' power_param { power: 0 scale: 2 shift: 1 }");
  ExpectMatchesOnOddShapes("type: 'Power' power_param { power: 2 scale: 0 shift: 1.5 }");
  // Nothing is saved: the derivative needs no data, so poisoning is harmless.
  ExpectInPlaceGpuMatchesCpu("type: 'Power' power_param { power: 1 scale: -2 shift: 0.5 }",
                             kInPlaceShape, nullptr, true);
}

TEST(GpuSwishLayerTest, Betas) {
  ExpectMatchesOnOddShapes("type: 'Swish'");
  ExpectMatchesOnOddShapes("type: 'Swish' swish_param { beta: 2.5 }");
  ExpectInPlaceGpuMatchesCpu("type: 'Swish' swish_param { beta: 0.7 }", kInPlaceShape, nullptr,
                             true);
}

// ---- Threshold ----

TEST(GpuThresholdLayerTest, ForwardOnly) {
  for (const std::string& layer :
       {std::string("type: 'Threshold'"),
        std::string("type: 'Threshold' threshold_param { threshold: 0.3 }")}) {
    for (const std::vector<int64_t>& shape : OddShapes()) {
      SCOPED_TRACE(layer + " " + ShapeString(shape));
      GpuCase c = NewCase(layer, {shape});
      c.propagate_down = {false};
      c.check_gradient = false;
      ExpectGpuMatchesCpu(c);
    }
  }
}

TEST(GpuThresholdLayerTest, BackwardToTheBottomIsAnError) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  Blob x({13}), y;
  FillGaussian(&x, 3);
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayerOn("name: 'step' type: 'Threshold'", Device::kGPU);
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  ExpectErrorContaining([&] { layer->Backward(top, {true}, bottom); },
                        {"Threshold layer 'step'", "not differentiable"});
}

// ---- PReLU ----

constexpr char kSlopeFiller[] = " filler { type: 'gaussian' std: 0.5 }";

TEST(GpuPReLULayerTest, PerChannel) {
  const std::string prelu = std::string("type: 'PReLU' prelu_param {") + kSlopeFiller + " }";
  ExpectGpuMatchesCpu(NewCase(prelu, {{2, 3, 1, 13}}, GaussianAwayFrom({0})));
  ExpectGpuMatchesCpu(NewCase(prelu, {{13, 127}}, GaussianAwayFrom({0})));
  ExpectGpuMatchesCpu(NewCase(prelu, {{1, 1, 7, 5}}, GaussianAwayFrom({0})));
}

TEST(GpuPReLULayerTest, DefaultConstantSlope) {
  ExpectGpuMatchesCpu(NewCase("type: 'PReLU'", {{2, 5, 3}}, GaussianAwayFrom({0})));
}

TEST(GpuPReLULayerTest, ChannelShared) {
  const std::string prelu =
      std::string("type: 'PReLU' prelu_param { channel_shared: true") + kSlopeFiller + " }";
  ExpectGpuMatchesCpu(NewCase(prelu, {{127, 13}}, GaussianAwayFrom({0})));
  ExpectGpuMatchesCpu(NewCase(prelu, {{2, 3, 1, 13}}, GaussianAwayFrom({0})));
}

TEST(GpuPReLULayerTest, InPlaceKeepsTheInput) {
  const std::string prelu = std::string("type: 'PReLU' prelu_param {") + kSlopeFiller + " }";
  ExpectInPlaceGpuMatchesCpu(prelu, kInPlaceShape, GaussianAwayFrom({0}), true);
  ExpectInPlaceGpuMatchesCpu(
      std::string("type: 'PReLU' prelu_param { channel_shared: true") + kSlopeFiller + " }",
      kInPlaceShape, GaussianAwayFrom({0}), true);
}

// ---- Dropout ----

TEST(GpuDropoutLayerTest, TrainDropsTheCpuElements) {
  // The same mask as on the CPU, drawn from the same stream.
  ExpectMatchesOnOddShapes("type: 'Dropout' phase: TRAIN dropout_param { dropout_ratio: 0.3 }");
  ExpectMatchesOnOddShapes("type: 'Dropout' phase: TRAIN");
  ExpectMatchesOnOddShapes("type: 'Dropout' phase: TRAIN dropout_param { dropout_ratio: 0 }");
}

TEST(GpuDropoutLayerTest, TestIsIdentity) {
  ExpectMatchesOnOddShapes("type: 'Dropout' phase: TEST dropout_param { dropout_ratio: 0.6 }");
}

TEST(GpuDropoutLayerTest, InPlace) {
  // Backward reads only the mask.
  ExpectInPlaceGpuMatchesCpu("type: 'Dropout' phase: TRAIN dropout_param { dropout_ratio: 0.4 }",
                             kInPlaceShape, nullptr, true);
  ExpectInPlaceGpuMatchesCpu("type: 'Dropout' phase: TEST", kInPlaceShape, nullptr, true);
}

// ---- Bias ----

constexpr char kBiasFiller[] = " filler { type: 'gaussian' std: 0.5 }";

std::string BiasPrototxt(const std::string& options) {
  return "type: 'Bias' bias_param { " + options + kBiasFiller + " }";
}

TEST(GpuBiasLayerTest, LearnedBias) {
  ExpectGpuMatchesCpu(NewCase(BiasPrototxt(""), {{2, 3, 1, 13}}));
  ExpectGpuMatchesCpu(NewCase(BiasPrototxt("axis: 0 num_axes: -1"), {{13, 7}}));
  ExpectGpuMatchesCpu(NewCase(BiasPrototxt("axis: -1"), {{2, 3, 1, 13}}));
  ExpectGpuMatchesCpu(NewCase(BiasPrototxt("axis: 1 num_axes: 2"), {{127, 13, 1}}));
}

TEST(GpuBiasLayerTest, ScalarBias) {
  ExpectGpuMatchesCpu(NewCase(BiasPrototxt("num_axes: 0"), {{2, 3, 1, 13}}));
}

TEST(GpuBiasLayerTest, BiasFromBottomOne) {
  ExpectGpuMatchesCpu(NewCase("type: 'Bias'", {{2, 3, 1, 13}, {3, 1}}));
  ExpectGpuMatchesCpu(NewCase("type: 'Bias' bias_param { axis: 0 }", {{127, 13}, {127}}));
  ExpectGpuMatchesCpu(NewCase("type: 'Bias'", {{2, 3, 1, 13}, {}}));
  GpuCase only_x = NewCase("type: 'Bias'", {{2, 3, 1, 13}, {3}});
  only_x.propagate_down = {true, false};
  ExpectGpuMatchesCpu(only_x);
}

TEST(GpuBiasLayerTest, InPlace) {
  ExpectInPlaceGpuMatchesCpu(BiasPrototxt(""), kInPlaceShape, nullptr, true);
}

// ---- Scale ----

constexpr char kScaleFillers[] =
    " filler { type: 'gaussian' std: 0.7 } bias_filler { type: 'gaussian' std: 0.5 }";

std::string ScalePrototxt(const std::string& options) {
  return "type: 'Scale' scale_param { " + options + kScaleFillers + " }";
}

// Large enough that each channel's gradient sums are cut among several
// blocks, mid-row (GpuChannelReduce).
TEST(GpuScaleLayerTest, LargeOddShapeSplitsTheChannelSums) {
  GpuCase c = NewCase(ScalePrototxt("bias_term: true"), {{16, 5, 37, 41}});
  c.check_gradient = false;
  c.tolerance = 1e-3f;
  ExpectGpuMatchesCpu(c);
}

TEST(GpuScaleLayerTest, LearnedScale) {
  ExpectGpuMatchesCpu(NewCase(ScalePrototxt(""), {{2, 3, 1, 13}}));
  ExpectGpuMatchesCpu(NewCase(ScalePrototxt("bias_term: true"), {{2, 3, 1, 13}}));
  ExpectGpuMatchesCpu(NewCase(ScalePrototxt("axis: 0 num_axes: -1 bias_term: true"), {{13, 7}}));
  ExpectGpuMatchesCpu(NewCase(ScalePrototxt("axis: -1"), {{127, 13}}));
  ExpectGpuMatchesCpu(NewCase(ScalePrototxt("num_axes: 0 bias_term: true"), {{2, 3, 1, 13}}));
}

TEST(GpuScaleLayerTest, ScaleFromBottomOne) {
  ExpectGpuMatchesCpu(NewCase("type: 'Scale'", {{2, 3, 1, 13}, {3, 1}}));
  ExpectGpuMatchesCpu(NewCase(ScalePrototxt("axis: 0 bias_term: true"), {{127, 13}, {127}}));
  ExpectGpuMatchesCpu(NewCase("type: 'Scale'", {{2, 3, 1, 13}, {}}));
  GpuCase only_x = NewCase(ScalePrototxt("bias_term: true"), {{2, 3, 1, 13}, {3}});
  only_x.propagate_down = {true, false};
  ExpectGpuMatchesCpu(only_x);
}

TEST(GpuScaleLayerTest, InPlaceKeepsTheInput) {
  ExpectInPlaceGpuMatchesCpu(ScalePrototxt("bias_term: true"), kInPlaceShape, nullptr, true);
  ExpectInPlaceGpuMatchesCpu(ScalePrototxt("num_axes: 0"), kInPlaceShape, nullptr, true);
}

// ---- Eltwise ----

/// Bottom i on a 0.05 grid shifted by i / 60, so values of different
/// bottoms differ by at least 1/60 > the 0.01 finite-difference step and no
/// step changes which bottom wins a max.
void FillSeparated(int index, Blob* bottom) {
  FillDistinct(bottom, 1000 + static_cast<uint32_t>(index));
  float* x = bottom->mutable_cpu_data();
  for (int64_t i = 0; i < bottom->count(); ++i) x[i] += static_cast<float>(index) / 60.0f;
}

TEST(GpuEltwiseLayerTest, Sum) {
  ExpectGpuMatchesCpu(NewCase("type: 'Eltwise'", {{127, 13}, {127, 13}}));
  ExpectGpuMatchesCpu(
      NewCase("type: 'Eltwise' eltwise_param { operation: SUM coeff: 1 coeff: -0.5 coeff: 2 }",
              {{2, 3, 1, 13}, {2, 3, 1, 13}, {2, 3, 1, 13}}));
}

TEST(GpuEltwiseLayerTest, Prod) {
  const std::vector<std::vector<int64_t>> three = {{2, 3, 1, 13}, {2, 3, 1, 13}, {2, 3, 1, 13}};
  ExpectGpuMatchesCpu(NewCase("type: 'Eltwise' eltwise_param { operation: PROD }", three));
  // Dividing the top by x_k needs x_k away from 0.
  ExpectGpuMatchesCpu(
      NewCase("type: 'Eltwise' eltwise_param { operation: PROD stable_prod_grad: false }", three,
              GaussianAwayFrom({0}, 0.3f)));
  ExpectGpuMatchesCpu(
      NewCase("type: 'Eltwise' eltwise_param { operation: PROD }", {{127, 13}, {127, 13}}));
}

TEST(GpuEltwiseLayerTest, Max) {
  ExpectGpuMatchesCpu(NewCase("type: 'Eltwise' eltwise_param { operation: MAX }",
                              {{127, 13}, {127, 13}}, FillSeparated));
  ExpectGpuMatchesCpu(NewCase("type: 'Eltwise' eltwise_param { operation: MAX }",
                              {{2, 3, 1, 13}, {2, 3, 1, 13}, {2, 3, 1, 13}}, FillSeparated));
}

TEST(GpuEltwiseLayerTest, MaxTiesFollowCaffeOrder) {
  // Equal bottoms: bottom 1 beats bottom 0, and later bottoms never win a
  // tie, so every gradient goes to bottom 1.
  GpuCase c = NewCase("type: 'Eltwise' eltwise_param { operation: MAX }", {{13}, {13}, {13}},
                      [](int, Blob* bottom) { FillGaussian(bottom, 7); });
  c.check_gradient = false;
  ExpectGpuMatchesCpu(c);
}

TEST(GpuEltwiseLayerTest, SomeBottomsOnly) {
  GpuCase c = NewCase("type: 'Eltwise' eltwise_param { operation: PROD }",
                      {{2, 3, 1, 13}, {2, 3, 1, 13}, {2, 3, 1, 13}});
  c.propagate_down = {true, false, true};
  ExpectGpuMatchesCpu(c);
}

// ---- Silence and Split ----

TEST(GpuSilenceLayerTest, ZeroesRequestedGradientsOnly) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  Blob a({127, 13}), b({2, 3, 1, 13});
  Set(a.count(), 5.0f, a.mutable_cpu_diff());
  Set(b.count(), 5.0f, b.mutable_cpu_diff());
  std::vector<Blob*> bottom{&a, &b}, top;
  auto layer = MakeLayerOn("type: 'Silence'", Device::kGPU);
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  layer->Backward(top, {true, false}, bottom);
  EXPECT_EQ(DiffOf(a), std::vector<float>(a.count(), 0.0f));
  EXPECT_EQ(DiffOf(b), std::vector<float>(b.count(), 5.0f));
}

TEST(GpuSplitLayerTest, TopsShareDataAndGradientsSum) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  Blob x({2, 3, 1, 13});
  FillGaussian(&x, 5);
  Blob t0, t1, t2;
  std::vector<Blob*> bottom{&x}, top{&t0, &t1, &t2};
  auto layer = MakeLayerOn("type: 'Split'", Device::kGPU);
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  std::vector<float> sum(x.count(), 0.0f);
  for (size_t t = 0; t < top.size(); ++t) {
    EXPECT_EQ(DataOf(*top[t]), DataOf(x));
    Blob dy(x.shape());
    FillGaussian(&dy, 20 + static_cast<uint32_t>(t));
    Copy(dy.count(), dy.cpu_data(), top[t]->mutable_cpu_diff());
    for (int64_t i = 0; i < x.count(); ++i) sum[i] += dy.cpu_data()[i];
  }
  Set(x.count(), 7.0f, x.mutable_cpu_diff());
  layer->Backward(top, {false}, bottom);
  EXPECT_EQ(DiffOf(x), std::vector<float>(x.count(), 7.0f));
  layer->Backward(top, {true}, bottom);
  ExpectNear(DiffOf(x), sum, 1e-5f);

  GradientChecker checker(1e-2f, 1e-2f);
  auto checked = MakeLayerOn("type: 'Split'", Device::kGPU);
  checker.CheckGradient(checked.get(), bottom, top);
}

}  // namespace
}  // namespace demi
