// Convolution, Deconvolution and InnerProduct in BFLOAT16 math (oneDNN's bf16
// kernels, FLOAT storage) against the same layers in FLOAT on inputs rounded
// to bfloat16.
// The FLOAT engines are checked against finite differences in
// test_dnnl_engine.cpp; inputs rounded to 8 significant bits make finite
// differences too coarse here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "demi/util/dnnl.hpp"
#include "layer_compare_util.hpp"

namespace demi {
namespace {

constexpr char kBf16Math[] = " forward_math: BFLOAT16 backward_math: BFLOAT16";
constexpr char kNoBfloat16Math[] = "oneDNN computes no bfloat16 on this CPU (no AVX-512)";
constexpr char kFillers[] =
    " weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' std: 0.3 }";

std::string Conv(const std::string& type, const std::string& options) {
  return "type: '" + type + "' convolution_param { " + options + kFillers + " }";
}

std::string InnerProduct(const std::string& options) {
  return "type: 'InnerProduct' inner_product_param { " + options + kFillers + " }";
}

/// The layer with the DNNL engine, as written plus `extra` fields.
std::unique_ptr<Layer> DnnlLayer(const std::string& text, const std::string& extra = "") {
  std::unique_ptr<Layer> layer = MakeLayer(text + extra);
  Context context;
  context.engine = EngineKind::kDnnl;
  layer->set_context(context);
  return layer;
}

/// `value` rounded to the nearest bfloat16 (ties to even), as a float.
float RoundToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&value, &bits, sizeof(bits));
  return value;
}

void RoundToBfloat16(int64_t count, float* values) {
  for (int64_t i = 0; i < count; ++i) values[i] = RoundToBfloat16(values[i]);
}

/// The layer in BFLOAT16 math computes what the FLOAT layer computes from
/// its inputs rounded to bfloat16 (image, weights, output gradient; the
/// bias stays FLOAT): the tops, bottom gradient and param gradients agree
/// up to the order of FLOAT sums. A layer that ran in FLOAT, or rounded
/// anything else, would be off by bfloat16's 0.4 %.
void ExpectBf16IsFloatOfRoundedInputs(const std::string& text, const std::vector<int64_t>& shape) {
  Blob x(shape), x_rounded(shape), y_float, y_bf16;
  FillGaussian(&x, 7);
  x_rounded.CopyFrom(x);
  RoundToBfloat16(x_rounded.count(), x_rounded.mutable_cpu_data());
  std::vector<Blob*> bottom_float = {&x_rounded}, bottom_bf16 = {&x};
  std::vector<Blob*> top_float = {&y_float}, top_bf16 = {&y_bf16};
  if (!DnnlComputesBfloat16()) GTEST_SKIP() << kNoBfloat16Math;
  auto in_float = DnnlLayer(text);
  auto in_bf16 = DnnlLayer(text, kBf16Math);
  in_float->SetUp(bottom_float, top_float);
  in_bf16->SetUp(bottom_bf16, top_bf16);
  EXPECT_EQ(in_bf16->engine().types.forward_math, BFLOAT16);
  if (in_bf16->running_engine() != EngineKind::kDnnl) {
    GTEST_SKIP() << "oneDNN has no bfloat16 kernel for this layer on this CPU";
  }
  for (size_t p = 0; p < in_float->blobs().size(); ++p) {
    in_bf16->blobs()[p]->CopyFrom(*in_float->blobs()[p]);
  }
  Blob& weights = *in_float->blobs()[0];
  RoundToBfloat16(weights.count(), weights.mutable_cpu_data());

  in_float->Forward(bottom_float, top_float);
  in_bf16->Forward(bottom_bf16, top_bf16);
  constexpr float kTolerance = 1e-4f;
  ExpectClose(y_bf16, y_float, kTolerance, "top");

  Blob dy(y_float.shape());
  FillGaussian(&dy, 8);
  Copy(dy.count(), dy.cpu_data(), y_bf16.mutable_cpu_diff());
  RoundToBfloat16(dy.count(), dy.mutable_cpu_data());
  Copy(dy.count(), dy.cpu_data(), y_float.mutable_cpu_diff());
  for (auto* layer : {in_float.get(), in_bf16.get()}) {
    for (const auto& blob : layer->blobs()) Set(blob->count(), 0.0f, blob->mutable_cpu_diff());
  }
  in_float->Backward(top_float, {true}, bottom_float);
  in_bf16->Backward(top_bf16, {true}, bottom_bf16);
  ExpectCloseDiff(x, x_rounded, kTolerance, "bottom diff");
  for (size_t p = 0; p < in_float->blobs().size(); ++p) {
    ExpectCloseDiff(*in_bf16->blobs()[p], *in_float->blobs()[p], kTolerance,
                    StrCat("param diff ", p));
  }
}

TEST(Bf16MathTest, ConvolutionStridedPadded) {
  ExpectBf16IsFloatOfRoundedInputs(
      Conv("Convolution", "num_output: 16 kernel_size: 3 pad: 1 stride: 2"), {2, 16, 9, 8});
}

TEST(Bf16MathTest, ConvolutionOneByOne) {
  ExpectBf16IsFloatOfRoundedInputs(Conv("Convolution", "num_output: 8 kernel_size: 1"),
                                   {2, 16, 5, 5});
}

TEST(Bf16MathTest, ConvolutionGroups) {
  ExpectBf16IsFloatOfRoundedInputs(Conv("Convolution", "num_output: 32 kernel_size: 3 group: 2"),
                                   {2, 32, 6, 6});
}

TEST(Bf16MathTest, Deconvolution) {
  // Without a bias: Deconvolution adds its bias, and sums its gradient, in
  // FLOAT loops of its own, from the unrounded output gradient.
  ExpectBf16IsFloatOfRoundedInputs(
      Conv("Deconvolution", "num_output: 16 kernel_size: 3 stride: 2 bias_term: false"),
      {2, 16, 4, 4});
}

TEST(Bf16MathTest, InnerProductOfRows) {
  // The bias gradient too comes from the bfloat16 output gradient, inside
  // oneDNN's weight-gradient primitive, as Convolution's fused bias.
  ExpectBf16IsFloatOfRoundedInputs(InnerProduct("num_output: 24"), {6, 40});
}

TEST(Bf16MathTest, InnerProductOfImagesTransposed) {
  ExpectBf16IsFloatOfRoundedInputs(InnerProduct("num_output: 10 transpose: true"), {3, 8, 3, 5});
}

TEST(Bf16MathTest, InnerProductWithoutBias) {
  ExpectBf16IsFloatOfRoundedInputs(InnerProduct("num_output: 7 bias_term: false"), {4, 33});
}

/// BFLOAT16 forward math alone changes the top only: the backward, in
/// FLOAT, gives exactly the FLOAT layer's gradients (from the unrounded
/// bottom, which a layer reading its bfloat16 copy would not).
void ExpectForwardMathAloneLeavesBackwardInFloat(const std::string& text,
                                                 const std::vector<int64_t>& shape) {
  Blob bottom_float(shape), bottom_bf16(shape), top_float, top_bf16;
  FillGaussian(&bottom_float, 3);
  bottom_bf16.CopyFrom(bottom_float);
  std::vector<Blob*> bf = {&bottom_float}, bb = {&bottom_bf16}, tf = {&top_float}, tb = {&top_bf16};
  if (!DnnlComputesBfloat16()) GTEST_SKIP() << kNoBfloat16Math;
  auto in_float = DnnlLayer(text);
  auto forward_bf16 = DnnlLayer(text, " forward_math: BFLOAT16");
  in_float->SetUp(bf, tf);
  forward_bf16->SetUp(bb, tb);
  EXPECT_EQ(forward_bf16->engine().types.forward_math, BFLOAT16);
  EXPECT_EQ(forward_bf16->engine().types.backward_math, FLOAT);
  if (forward_bf16->running_engine() != EngineKind::kDnnl) {
    GTEST_SKIP() << "oneDNN has no bfloat16 kernel for this layer on this CPU";
  }
  for (size_t p = 0; p < in_float->blobs().size(); ++p) {
    forward_bf16->blobs()[p]->CopyFrom(*in_float->blobs()[p]);
  }
  in_float->Forward(bf, tf);
  forward_bf16->Forward(bb, tb);
  Blob diff(top_float.shape());
  FillGaussian(&diff, 4);
  for (Blob* top : {&top_float, &top_bf16}) {
    ASSERT_EQ(top->channel_block(), diff.channel_block());
    Copy(diff.count(), diff.cpu_data(), top->mutable_cpu_diff());
  }
  in_float->Backward(tf, {true}, bf);
  forward_bf16->Backward(tb, {true}, bb);
  auto same = [](const float* a, const float* b, int64_t n) { return std::equal(a, a + n, b); };
  EXPECT_FALSE(same(top_float.cpu_data(), top_bf16.cpu_data(), top_float.count()));
  EXPECT_TRUE(same(bottom_float.cpu_diff(), bottom_bf16.cpu_diff(), bottom_float.count()));
  for (size_t p = 0; p < in_float->blobs().size(); ++p) {
    EXPECT_TRUE(same(in_float->blobs()[p]->cpu_diff(), forward_bf16->blobs()[p]->cpu_diff(),
                     in_float->blobs()[p]->count()))
        << "param " << p;
  }
}

TEST(Bf16MathTest, ForwardMathAloneLeavesBackwardInFloat) {
  ExpectForwardMathAloneLeavesBackwardInFloat(Conv("Convolution", "num_output: 16 kernel_size: 3"),
                                              {2, 16, 6, 6});
  ExpectForwardMathAloneLeavesBackwardInFloat(InnerProduct("num_output: 12"), {2, 16, 3, 3});
}

TEST(Bf16MathTest, ACpuWithoutBfloat16KernelsRunsBfloat16MathInFloat) {
  // A layer's own BFLOAT16 math, where oneDNN computes none (no AVX-512),
  // is FLOAT math on the DNNL engine: the FLOAT layer's numbers exactly,
  // and its decision says so. Where oneDNN computes bfloat16, the decision
  // keeps it (the tests above compare the numbers).
  const std::string text = Conv("Convolution", "num_output: 8 kernel_size: 3 pad: 1");
  const std::vector<int64_t> shape = {2, 16, 5, 5};
  Blob x(shape), y_float, y_asked;
  FillGaussian(&x, 5);
  std::vector<Blob*> bottom = {&x}, top_float = {&y_float}, top_asked = {&y_asked};
  auto in_float = DnnlLayer(text);
  auto asked = DnnlLayer(text, kBf16Math);
  in_float->SetUp(bottom, top_float);
  asked->SetUp(bottom, top_asked);
  const Type math = DnnlComputesBfloat16() ? BFLOAT16 : FLOAT;
  EXPECT_EQ(asked->engine().types.forward_math, math);
  EXPECT_EQ(asked->engine().types.backward_math, math);
  EXPECT_EQ(asked->engine().engine, EngineKind::kDnnl);
  if (math == BFLOAT16) return;
  ASSERT_EQ(asked->running_engine(), EngineKind::kDnnl);
  asked->blobs()[0]->CopyFrom(*in_float->blobs()[0]);
  asked->blobs()[1]->CopyFrom(*in_float->blobs()[1]);
  in_float->Forward(bottom, top_float);
  asked->Forward(bottom, top_asked);
  EXPECT_TRUE(
      std::equal(y_float.cpu_data(), y_float.cpu_data() + y_float.count(), y_asked.cpu_data()));
}

}  // namespace
}  // namespace demi
