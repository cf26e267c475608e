// GPU twins and cuDNN engines of the convolution-family layers against the
// CPU: Convolution, Deconvolution, Im2col, InnerProduct, Pooling, LRN and
// BatchNorm. Engine-parameterized suites run each case with engine CAFFE and
// engine CUDNN (which is the CAFFE twin in builds without cuDNN).
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.hpp"

namespace demi {
namespace {

class GpuEngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  const std::string& engine() const { return GetParam(); }
};

/// A case with the default fill, gradients into every bottom and the
/// default tolerances.
GpuCase NewCase(const std::string& layer, std::vector<std::vector<int64_t>> bottoms) {
  GpuCase c;
  c.layer = layer;
  c.bottoms = std::move(bottoms);
  return c;
}

constexpr char kFillers[] =
    " weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' std: 0.3 }";

// ---- Convolution and Deconvolution ----

class GpuConvolutionTest : public GpuEngineTest {
 protected:
  std::string Prototxt(const std::string& type, const std::string& options) const {
    return "type: '" + type + "' convolution_param { engine: " + engine() + " " + options +
           kFillers + " }";
  }
};

TEST_P(GpuConvolutionTest, StridedPadded) {
  ExpectGpuMatchesCpu(NewCase(
      Prototxt("Convolution", "num_output: 4 kernel_size: 3 pad: 1 stride: 2"), {{2, 3, 7, 6}}));
}

TEST_P(GpuConvolutionTest, GroupsDilationRectangular) {
  ExpectGpuMatchesCpu(NewCase(Prototxt("Convolution",
                                       "num_output: 6 group: 2 kernel_h: 3 kernel_w: 2 dilation: 2 "
                                       "stride_h: 1 stride_w: 2 pad_h: 2 pad_w: 1"),
                              {{2, 4, 7, 9}}));
}

TEST_P(GpuConvolutionTest, Depthwise) {
  ExpectGpuMatchesCpu(NewCase(
      Prototxt("Convolution", "num_output: 4 group: 4 kernel_size: 3 pad: 1"), {{1, 4, 5, 6}}));
}

TEST_P(GpuConvolutionTest, OneByOneWithoutBias) {
  ExpectGpuMatchesCpu(NewCase(
      Prototxt("Convolution", "num_output: 3 kernel_size: 1 bias_term: false"), {{2, 5, 3, 4}}));
}

TEST_P(GpuConvolutionTest, TwoBottoms) {
  ExpectGpuMatchesCpu(NewCase(Prototxt("Convolution", "num_output: 2 kernel_size: 2 stride: 1"),
                              {{2, 3, 4, 3}, {2, 3, 4, 3}}));
}

TEST_P(GpuConvolutionTest, LargeOddImage) {
  GpuCase c =
      NewCase(Prototxt("Convolution", "num_output: 13 kernel_size: 5 pad: 2 stride: 3 group: 1"),
              {{3, 7, 127, 13}});
  c.check_gradient = false;
  c.tolerance = 1e-3f;  // sums of 175 products in another order
  ExpectGpuMatchesCpu(c);
}

TEST_P(GpuConvolutionTest, DeconvolutionStridedPadded) {
  ExpectGpuMatchesCpu(NewCase(
      Prototxt("Deconvolution", "num_output: 4 kernel_size: 3 pad: 1 stride: 2"), {{2, 3, 4, 3}}));
}

TEST_P(GpuConvolutionTest, DeconvolutionGroupsDilation) {
  ExpectGpuMatchesCpu(NewCase(Prototxt("Deconvolution",
                                       "num_output: 4 group: 2 kernel_h: 2 kernel_w: 3 dilation: 2 "
                                       "stride: 2 pad_w: 1 pad_h: 0"),
                              {{1, 6, 3, 4}}));
}

TEST_P(GpuConvolutionTest, DeconvolutionOneByOne) {
  ExpectGpuMatchesCpu(NewCase(Prototxt("Deconvolution", "num_output: 3 kernel_size: 1"),
                              {{2, 2, 5, 3}, {2, 2, 5, 3}}));
}

TEST_P(GpuConvolutionTest, DeconvolutionLargeOddImage) {
  GpuCase c = NewCase(Prototxt("Deconvolution", "num_output: 5 kernel_size: 4 stride: 2 pad: 1"),
                      {{2, 13, 127, 1}});
  c.check_gradient = false;
  c.tolerance = 1e-3f;
  ExpectGpuMatchesCpu(c);
}

// The same layer run twice on the same input gives the same bits: cuDNN's
// algorithms are limited to deterministic ones, the twins gather.
TEST_P(GpuConvolutionTest, Deterministic) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto layer =
      MakeLayerOn(Prototxt("Convolution", "num_output: 8 kernel_size: 3 pad: 1"), Device::kGPU);
  Blob x({4, 6, 13, 11}), y;
  FillGaussian(&x, 7);
  layer->SetUp({&x}, {&y});
  Blob dy(y.shape());
  FillGaussian(&dy, 8);
  std::vector<float> top[2], dx[2], dw[2], db[2];
  for (int run = 0; run < 2; ++run) {
    layer->Forward({&x}, {&y});
    Copy(dy.count(), dy.cpu_data(), y.mutable_cpu_diff());
    for (auto& blob : layer->blobs()) Set(blob->count(), 0.0f, blob->mutable_cpu_diff());
    layer->Backward({&y}, {true}, {&x});
    top[run] = DataOf(y);
    dx[run] = DiffOf(x);
    dw[run] = DiffOf(*layer->blobs()[0]);
    db[run] = DiffOf(*layer->blobs()[1]);
  }
  EXPECT_EQ(top[0], top[1]);
  EXPECT_EQ(dx[0], dx[1]);
  EXPECT_EQ(dw[0], dw[1]);
  EXPECT_EQ(db[0], db[1]);
}

INSTANTIATE_TEST_SUITE_P(Engines, GpuConvolutionTest, ::testing::Values("CAFFE", "CUDNN"));

// ---- GpuMath::kTensorOps: TF32 tensor cores and measured cuDNN algorithms ----

/// The case's layer on the CPU against the GPU in kTensorOps math. TF32 keeps
/// 10 bits of each product's mantissas (relative error 2^-11), so values stay
/// within 1e-2 * (1 + |reference|) where FP32 stays within 1e-4.
void ExpectTensorOpsNearCpu(GpuCase c) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  c.check_gradient = false;  // finite differences of TF32 products measure TF32's rounding
  c.tolerance = 1e-2f;
  ExpectLayersAgree(
      c, [&] { return MakeLayerOn(c.layer, Device::kCPU); },
      [&] {
        std::unique_ptr<Layer> layer = MakeLayer(c.layer);
        Context context;
        context.device = Device::kGPU;
        context.gpu_math = GpuMath::kTensorOps;
        layer->set_context(context);
        return layer;
      });
}

TEST(GpuTensorOpsTest, CudnnConvolutionStaysNearTheCpu) {
  ExpectTensorOpsNearCpu(
      NewCase("type: 'Convolution' convolution_param { engine: CUDNN "
              "num_output: 16 kernel_size: 3 pad: 1" +
                  std::string(kFillers) + " }",
              {{4, 16, 12, 12}}));
}

TEST(GpuTensorOpsTest, CudnnDeconvolutionStaysNearTheCpu) {
  ExpectTensorOpsNearCpu(
      NewCase("type: 'Deconvolution' convolution_param { engine: CUDNN "
              "num_output: 8 kernel_size: 3 stride: 2" +
                  std::string(kFillers) + " }",
              {{2, 16, 6, 5}}));
}

TEST(GpuTensorOpsTest, InnerProductStaysNearTheCpu) {
  ExpectTensorOpsNearCpu(NewCase(
      "type: 'InnerProduct' inner_product_param { num_output: 64" + std::string(kFillers) + " }",
      {{32, 256}}));
}

// On Ampere and newer (without NVIDIA_TF32_OVERRIDE=0) the switch must reach
// the libraries: a 256-term product in TF32 differs from FP32's somewhere.
TEST(GpuTensorOpsTest, InnerProductUsesTf32OnAmpereAndNewer) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  const char* override_tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
  if (GetDeviceInfo(0).major < 8 || (override_tf32 && std::string(override_tf32) == "0")) {
    GTEST_SKIP() << "no TF32 on this device or NVIDIA_TF32_OVERRIDE=0";
  }
  const std::string text =
      "type: 'InnerProduct' inner_product_param { num_output: 64" + std::string(kFillers) + " }";
  auto top_in = [&](GpuMath math) {
    std::unique_ptr<Layer> layer = MakeLayer(text);
    Context context;
    context.device = Device::kGPU;
    context.gpu_math = math;
    layer->set_context(context);
    Blob bottom(std::vector<int64_t>{32, 256}), top;
    for (int64_t i = 0; i < bottom.count(); ++i) {
      bottom.mutable_cpu_data()[i] = std::sin(0.37f * static_cast<float>(i));
    }
    layer->SetUp({&bottom}, {&top});
    layer->Forward({&bottom}, {&top});
    return std::vector<float>(top.cpu_data(), top.cpu_data() + top.count());
  };
  EXPECT_NE(top_in(GpuMath::kTensorOps), top_in(GpuMath::kDeterministic));
}

// ---- Im2col and InnerProduct (one engine) ----

TEST(GpuIm2colLayerTest, StridedPaddedDilated) {
  ExpectGpuMatchesCpu(
      NewCase("type: 'Im2col' convolution_param { kernel_h: 3 kernel_w: 2 pad: 1 "
              "stride: 2 dilation: 2 }",
              {{2, 3, 7, 6}}));
}

TEST(GpuIm2colLayerTest, OverlappingWindows) {
  ExpectGpuMatchesCpu(
      NewCase("type: 'Im2col' convolution_param { kernel_size: 3 stride: 1 }", {{1, 2, 5, 4}}));
}

TEST(GpuIm2colLayerTest, LargeOddImage) {
  GpuCase c = NewCase("type: 'Im2col' convolution_param { kernel_size: 3 pad: 1 stride: 2 }",
                      {{2, 3, 127, 13}});
  c.check_gradient = false;
  ExpectGpuMatchesCpu(c);
}

TEST(GpuInnerProductLayerTest, FourDimensional) {
  ExpectGpuMatchesCpu(NewCase(
      std::string("type: 'InnerProduct' inner_product_param { num_output: 7") + kFillers + " }",
      {{2, 3, 4, 5}}));
}

TEST(GpuInnerProductLayerTest, TransposedAxisTwo) {
  ExpectGpuMatchesCpu(
      NewCase(std::string("type: 'InnerProduct' inner_product_param { num_output: 3 "
                          "axis: 2 transpose: true") +
                  kFillers + " }",
              {{2, 3, 4, 5}}));
}

TEST(GpuInnerProductLayerTest, WithoutBias) {
  ExpectGpuMatchesCpu(
      NewCase(std::string("type: 'InnerProduct' inner_product_param { num_output: 1 "
                          "bias_term: false") +
                  kFillers + " }",
              {{13, 1}}));
}

TEST(GpuInnerProductLayerTest, LargeOdd) {
  GpuCase c = NewCase(
      std::string("type: 'InnerProduct' inner_product_param { num_output: 13") + kFillers + " }",
      {{127, 127}});
  c.check_gradient = false;
  c.tolerance = 1e-3f;
  ExpectGpuMatchesCpu(c);
}

// ---- Pooling ----

class GpuPoolingTest : public GpuEngineTest {
 protected:
  /// Distinct inputs, so MAX has no ties and a finite-difference step never
  /// moves an argmax.
  GpuCase Case(const std::string& options, std::vector<int64_t> shape) const {
    GpuCase c =
        NewCase("type: 'Pooling' pooling_param { engine: " + engine() + " " + options + " }",
                {std::move(shape)});
    c.fill = [](int index, Blob* blob) { FillDistinct(blob, 31 + index); };
    return c;
  }
};

TEST_P(GpuPoolingTest, MaxExactWindows) {  // CEIL == FLOOR: cuDNN's shapes
  ExpectGpuMatchesCpu(Case("pool: MAX kernel_size: 3 stride: 2", {2, 3, 7, 5}));
}

TEST_P(GpuPoolingTest, MaxCeilPadded) {  // CEIL past FLOOR: the CAFFE kernels
  ExpectGpuMatchesCpu(Case("pool: MAX kernel_size: 3 stride: 2 pad: 1", {1, 2, 7, 8}));
}

TEST_P(GpuPoolingTest, MaxFloorRectangular) {
  ExpectGpuMatchesCpu(
      Case("pool: MAX kernel_h: 2 kernel_w: 3 stride_h: 2 stride_w: 1 "
           "pad_h: 1 pad_w: 0 round_mode: FLOOR",
           {1, 3, 6, 5}));
}

TEST_P(GpuPoolingTest, MaxWindowsOutsideImage) {  // CEIL with stride > kernel
  ExpectGpuMatchesCpu(Case("pool: MAX kernel_size: 1 stride: 3", {1, 2, 5, 5}));
}

TEST_P(GpuPoolingTest, MaxGlobal) {
  ExpectGpuMatchesCpu(Case("pool: MAX global_pooling: true", {2, 3, 5, 7}));
}

TEST_P(GpuPoolingTest, AveExactWindowsPadded) {  // padding counted, as cuDNN counts it
  ExpectGpuMatchesCpu(Case("pool: AVE kernel_size: 3 stride: 2 pad: 1", {2, 3, 7, 5}));
}

TEST_P(GpuPoolingTest, AveCeilPadded) {  // last window clipped to in + pad
  ExpectGpuMatchesCpu(Case("pool: AVE kernel_size: 3 stride: 2 pad: 1", {1, 2, 8, 6}));
}

TEST_P(GpuPoolingTest, AveGlobal) {
  ExpectGpuMatchesCpu(Case("pool: AVE global_pooling: true", {2, 3, 5, 7}));
}

TEST_P(GpuPoolingTest, LargeOddPlanes) {
  for (const char* pool : {"MAX", "AVE"}) {
    GpuCase c =
        Case(std::string("pool: ") + pool + " kernel_size: 5 stride: 3 pad: 2", {2, 13, 127, 13});
    c.check_gradient = false;
    ExpectGpuMatchesCpu(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, GpuPoolingTest, ::testing::Values("CAFFE", "CUDNN"));

// The mask top of MAX pooling holds the argmax indexes.
TEST(GpuPoolingLayerTest, MaskTopIsArgmax) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  auto layer = MakeLayerOn("type: 'Pooling' pooling_param { pool: MAX kernel_size: 2 stride: 2 }",
                           Device::kGPU);
  Blob x({1, 1, 2, 4}), y, mask;
  FillValues(&x, {1, 5, 2, 0, 3, 4, 7, 6});
  layer->SetUp({&x}, {&y, &mask});
  layer->Forward({&x}, {&y, &mask});
  ExpectNear(DataOf(y), {5, 7});
  ExpectNear(DataOf(mask), {1, 6});
}

// ---- LRN ----

class GpuLrnTest : public GpuEngineTest {
 protected:
  GpuCase Case(const std::string& options, std::vector<int64_t> shape) const {
    GpuCase c = NewCase("type: 'LRN' lrn_param { engine: " + engine() + " " + options + " }",
                        {std::move(shape)});
    return c;
  }
};

TEST_P(GpuLrnTest, AcrossChannels) {
  ExpectGpuMatchesCpu(
      Case("norm_region: ACROSS_CHANNELS local_size: 5 alpha: 1 beta: 0.75 k: 2", {2, 7, 3, 4}));
}

TEST_P(GpuLrnTest, AcrossFewChannels) {
  ExpectGpuMatchesCpu(Case("local_size: 3 alpha: 0.5 beta: 0.6", {1, 2, 5, 1}));
}

TEST_P(GpuLrnTest, AcrossWideWindow) {  // past cuDNN's 16: the CAFFE kernels
  ExpectGpuMatchesCpu(Case("local_size: 17 alpha: 1 beta: 0.75", {1, 19, 2, 2}));
}

TEST_P(GpuLrnTest, WithinChannel) {
  ExpectGpuMatchesCpu(
      Case("norm_region: WITHIN_CHANNEL local_size: 3 alpha: 1 beta: 0.75", {2, 3, 5, 4}));
}

TEST_P(GpuLrnTest, LargeOdd) {
  for (const char* region : {"ACROSS_CHANNELS", "WITHIN_CHANNEL"}) {
    GpuCase c =
        Case(std::string("norm_region: ") + region + " local_size: 5 alpha: 0.1", {2, 13, 127, 3});
    c.check_gradient = false;
    ExpectGpuMatchesCpu(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, GpuLrnTest, ::testing::Values("CAFFE", "CUDNN"));

// ---- BatchNorm (no engine field: cuDNN wherever the build has it) ----

TEST(GpuBatchNormLayerTest, BatchStatistics) {
  ExpectGpuMatchesCpu(NewCase("type: 'BatchNorm'", {{4, 3, 5, 2}}));
}

TEST(GpuBatchNormLayerTest, BatchStatisticsTwoDimensional) {
  ExpectGpuMatchesCpu(NewCase("type: 'BatchNorm' batch_norm_param { eps: 0.001 }", {{13, 7}}));
}

TEST(GpuBatchNormLayerTest, BatchStatisticsFiveDimensional) {
  ExpectGpuMatchesCpu(NewCase("type: 'BatchNorm'", {{2, 5, 3, 1, 2}}));
}

// NVCaffe's scale_bias: gamma and beta on both devices, their gradients
// included (the CUDA kernels run; cuDNN does not take scale_bias yet).
TEST(GpuBatchNormLayerTest, ScaleBias) {
  ExpectGpuMatchesCpu(
      NewCase("type: 'BatchNorm' batch_norm_param { scale_bias: true "
              "scale_filler { type: 'uniform' min: 0.5 max: 2 } bias_filler { type: 'gaussian' } }",
              {{4, 3, 5, 2}}));
}

TEST(GpuBatchNormLayerTest, ScaleBiasGlobalStatistics) {
  GpuCase c = NewCase(
      "type: 'BatchNorm' batch_norm_param { scale_bias: true use_global_stats: true "
      "scale_filler { type: 'uniform' min: 0.5 max: 2 } bias_filler { type: 'gaussian' } }",
      {{3, 4, 2, 2}});
  // The output depends on the statistics, which have no gradient: the
  // finite-difference check of every param does not apply.
  c.check_gradient = false;
  ExpectGpuMatchesCpu(c);
}

TEST(GpuBatchNormLayerTest, LargeOdd) {
  GpuCase c = NewCase("type: 'BatchNorm'", {{3, 13, 127, 1}});
  c.check_gradient = false;
  c.tolerance = 1e-3f;
  ExpectGpuMatchesCpu(c);
}

/// CPU and GPU layers of `text` with the same running sums (fraction-scaled
/// means and variances and a factor of 2.5).
void MakeBatchNormPair(const std::string& text, const std::vector<int64_t>& shape, Blob* cpu_x,
                       Blob* gpu_x, Blob* cpu_y, Blob* gpu_y, bool in_place,
                       std::unique_ptr<Layer>* cpu, std::unique_ptr<Layer>* gpu) {
  cpu_x->Reshape(shape);
  FillGaussian(cpu_x, 41);
  gpu_x->CopyFrom(*cpu_x, /*copy_diff=*/false, /*reshape=*/true);
  *cpu = MakeLayerOn(text, Device::kCPU);
  *gpu = MakeLayerOn(text, Device::kGPU);
  (*cpu)->SetUp({cpu_x}, {in_place ? cpu_x : cpu_y});
  (*gpu)->SetUp({gpu_x}, {in_place ? gpu_x : gpu_y});
  FillGaussian((*cpu)->blobs()[0].get(), 42);
  FillUniform((*cpu)->blobs()[1].get(), 43, 0.5f, 3.0f);
  FillValues((*cpu)->blobs()[2].get(), {2.5f});
  for (size_t p = 0; p < 3; ++p) (*gpu)->blobs()[p]->CopyFrom(*(*cpu)->blobs()[p]);
}

TEST(GpuBatchNormLayerTest, GlobalStatistics) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  Blob cpu_x, gpu_x, cpu_y, gpu_y;
  std::unique_ptr<Layer> cpu, gpu;
  MakeBatchNormPair("type: 'BatchNorm' batch_norm_param { use_global_stats: true }", {3, 4, 5, 2},
                    &cpu_x, &gpu_x, &cpu_y, &gpu_y, false, &cpu, &gpu);
  cpu->Forward({&cpu_x}, {&cpu_y});
  gpu->Forward({&gpu_x}, {&gpu_y});
  ExpectClose(gpu_y, cpu_y, 1e-5f, "top");
  FillGaussian(&cpu_x, 44);  // used as the top gradient
  Copy(cpu_y.count(), cpu_x.cpu_data(), cpu_y.mutable_cpu_diff());
  Copy(gpu_y.count(), cpu_x.cpu_data(), gpu_y.mutable_cpu_diff());
  cpu->Backward({&cpu_y}, {true}, {&cpu_x});
  gpu->Backward({&gpu_y}, {true}, {&gpu_x});
  ExpectCloseDiff(gpu_x, cpu_x, 1e-5f, "bottom diff");
  for (size_t p = 0; p < 3; ++p) {  // nothing updates
    ExpectClose(*gpu->blobs()[p], *cpu->blobs()[p], 0.0f, StrCat("param ", p));
  }
}

// Training updates the running sums alike, batch after batch.
TEST(GpuBatchNormLayerTest, RunningSums) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  Blob cpu_x, gpu_x, cpu_y, gpu_y;
  std::unique_ptr<Layer> cpu, gpu;
  MakeBatchNormPair("type: 'BatchNorm' batch_norm_param { moving_average_fraction: 0.9 }",
                    {6, 3, 2, 3}, &cpu_x, &gpu_x, &cpu_y, &gpu_y, false, &cpu, &gpu);
  for (int step = 0; step < 3; ++step) {
    FillGaussian(&cpu_x, 50 + step, 2.0f);
    gpu_x.CopyFrom(cpu_x);
    cpu->Forward({&cpu_x}, {&cpu_y});
    gpu->Forward({&gpu_x}, {&gpu_y});
    ExpectClose(gpu_y, cpu_y, 1e-4f, StrCat("top at step ", step));
  }
  for (size_t p = 0; p < 3; ++p) {
    ExpectClose(*gpu->blobs()[p], *cpu->blobs()[p], 1e-4f, StrCat("param ", p));
  }
}

// In place with batch statistics: y is kept in the saved copy, and Backward
// (dx over dy) reads that copy. The large odd shape cuts each channel's sums
// among several blocks, mid-row (GpuChannelReduce); its second backward must
// give the same bits.
class GpuBatchNormInPlaceTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(GpuBatchNormInPlaceTest, MatchesTheCpuAndRepeatsExactly) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  const std::vector<int64_t> shape = GetParam();
  Blob cpu_x, gpu_x, cpu_y, gpu_y;
  std::unique_ptr<Layer> cpu, gpu;
  MakeBatchNormPair("type: 'BatchNorm'", shape, &cpu_x, &gpu_x, &cpu_y, &gpu_y, true, &cpu, &gpu);
  ASSERT_NE(gpu->SavedOutputCopy(), nullptr);
  cpu->Forward({&cpu_x}, {&cpu_x});
  gpu->Forward({&gpu_x}, {&gpu_x});
  ExpectClose(gpu_x, cpu_x, 1e-4f, "top");
  ExpectClose(*gpu->SavedOutputCopy(), cpu_x, 1e-4f, "saved copy");
  Blob dy(shape);
  FillGaussian(&dy, 45);
  Blob first_dx(shape);
  for (int pass = 0; pass < 2; ++pass) {
    Copy(dy.count(), dy.cpu_data(), cpu_x.mutable_cpu_diff());
    Copy(dy.count(), dy.cpu_data(), gpu_x.mutable_cpu_diff());
    // A later in-place layer may overwrite y; Backward must not read it.
    Set(gpu_x.count(), kNaN, gpu_x.mutable_cpu_data());
    Set(cpu_x.count(), kNaN, cpu_x.mutable_cpu_data());
    cpu->Backward({&cpu_x}, {true}, {&cpu_x});
    gpu->Backward({&gpu_x}, {true}, {&gpu_x});
    ExpectCloseDiff(gpu_x, cpu_x, 1e-4f, "bottom diff");
    if (pass == 0) {
      Copy(gpu_x.count(), gpu_x.cpu_diff(), first_dx.mutable_cpu_data());
    } else {
      for (int64_t i = 0; i < gpu_x.count(); ++i) {
        ASSERT_EQ(gpu_x.cpu_diff()[i], first_dx.cpu_data()[i]) << "element " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuBatchNormInPlaceTest,
                         ::testing::Values(std::vector<int64_t>{4, 3, 3, 2},
                                           std::vector<int64_t>{16, 5, 37, 41}));

}  // namespace
}  // namespace demi
