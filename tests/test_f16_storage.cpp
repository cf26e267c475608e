// Blobs stored in FLOAT16 on the CPU (Blob::storage_type()), computed in
// FLOAT: the layers that store it against the same layers in FLOAT, the
// half-precision rounding against F16C's, and the ResNet block net in
// FLOAT16 (storage_compare_util.hpp states the tolerance).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "demi/memory/report.hpp"
#include "demi/net_schedule.hpp"
#include "storage_compare_util.hpp"

namespace demi {
namespace {

/// The layer of `c` in FLOAT16 against FLOAT.
void ExpectStoresFloat16LikeFloat(const StorageCase& c) { ExpectStoresLikeFloat(c, FLOAT16); }

TEST(F16StorageTest, ConvolutionReordersAroundAFloatPrimitive) {
  ExpectStoresFloat16LikeFloat(
      {StrCat("type: 'Convolution' convolution_param { num_output: 16 kernel_size: 3 pad: 1",
              kStorageFillers, " }")});
  // A 1x1 kernel over Caffe's layout runs oneDNN's plain (GEMM) kernel.
  ExpectStoresFloat16LikeFloat(
      {StrCat("type: 'Convolution' convolution_param { num_output: 32 kernel_size: 1",
              kStorageFillers, " }")});
}

TEST(F16StorageTest, BatchNorm) { ExpectCasesStoreLikeFloat("BatchNorm", FLOAT16); }

TEST(F16StorageTest, Scale) { ExpectCasesStoreLikeFloat("Scale", FLOAT16); }

TEST(F16StorageTest, ReLURunsTheCaffeLoop) {
  // oneDNN's eltwise has no FLOAT16 here: the CAFFE engine's loop stores it.
  auto relu = MakeDnnlLayer(StrCat("type: 'ReLU'", StorageFields(FLOAT16)));
  EXPECT_EQ(relu->engine().engine, EngineKind::kCaffe);
  ExpectStoresFloat16LikeFloat({"type: 'ReLU'"});
  ExpectStoresFloat16LikeFloat({"type: 'ReLU' relu_param { negative_slope: 0.1 }"});
}

TEST(F16StorageTest, PoolingInFloatBetweenReorders) {
  ExpectCasesStoreLikeFloat("Pooling", FLOAT16);
}

TEST(F16StorageTest, MappedNeuronLayers) {
  ExpectMappedNeuronsStoreLikeFloat(FLOAT16, Device::kCPU);
}

TEST(F16StorageTest, EltwiseSum) { ExpectCasesStoreLikeFloat("Eltwise", FLOAT16); }

TEST(F16StorageTest, Concat) { ExpectCasesStoreLikeFloat("Concat", FLOAT16); }

TEST(F16StorageTest, Split) { ExpectCasesStoreLikeFloat("Split", FLOAT16); }

TEST(F16StorageTest, RoundsAsIeeeHalfPrecision) {
  EXPECT_EQ(float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(float16(-2.0f).bits, 0xc000);
  EXPECT_EQ(float16(65504.0f).bits, 0x7bff);  // the largest finite half
  EXPECT_EQ(float16(65520.0f).bits, 0x7c00);  // halfway to 2^16: to infinity (even)
  EXPECT_EQ(float16(65519.0f).bits, 0x7bff);
  EXPECT_EQ(float16(0x1p-24f).bits, 0x0001);  // the smallest subnormal
  EXPECT_EQ(float16(0x1p-25f).bits, 0x0000);  // halfway to it: to zero (even)
  EXPECT_EQ(float16(0x3p-25f).bits, 0x0002);  // 1.5 units: to 2 (even)
  EXPECT_EQ(float16(0x1p-14f).bits, 0x0400);  // the smallest normal
  EXPECT_EQ(float16(-0.0f).bits, 0x8000);
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: to the even one, 1.
  EXPECT_EQ(static_cast<float>(float16(1.0f + 0x1p-11f)), 1.0f);
  EXPECT_EQ(static_cast<float>(float16(1.0f + 0x3p-11f)), 1.0f + 0x1p-9f);
  EXPECT_TRUE(std::isinf(static_cast<float>(float16(1e6f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(float16(std::nanf("")))));
  // Every half widens exactly and rounds back to itself (NaNs stay NaNs).
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float16 half;
    half.bits = static_cast<uint16_t>(bits);
    const float wide = half;
    if (std::isnan(wide)) {
      ASSERT_EQ(bits & 0x7c00u, 0x7c00u) << bits;
      ASSERT_NE(bits & 0x3ffu, 0u) << bits;
      continue;
    }
    ASSERT_EQ(float16(wide).bits, bits) << bits;
  }
  // The bulk widening (F16C where the CPU has it) gives the scalar's bits,
  // for every half.
  std::vector<float16> halves(0x10000);
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) halves[bits].bits = static_cast<uint16_t>(bits);
  std::vector<float> widened(halves.size());
  WidenFloat16(static_cast<int64_t>(halves.size()), halves.data(), widened.data());
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    ASSERT_EQ(__builtin_bit_cast(uint32_t, widened[bits]),
              __builtin_bit_cast(uint32_t, float16::Widen(static_cast<uint16_t>(bits))))
        << bits;
  }
  // The bulk rounding (F16C where the CPU has it) gives the scalar's bits:
  // random bit patterns (NaNs, infinities, subnormals), a length with a tail.
  std::mt19937 random(7);
  std::vector<float> values(1000 + 5);
  for (float& value : values) {
    const uint32_t bits = random();
    std::memcpy(&value, &bits, sizeof(value));
  }
  // And every range the rounding treats apart, up to past infinity.
  for (float value = 0x1p-26f; value < 1e5f; value *= 1.37f) values.push_back(value);
  std::vector<float16> bulk(values.size());
  RoundToFloat16(static_cast<int64_t>(values.size()), values.data(), bulk.data());
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(bulk[i].bits, float16::Round(values[i])) << i << ": " << values[i];
  }
}

TEST(F16StorageTest, ANetStoresTheBlobsBetweenFloat16LayersInFloat16) {
  auto narrow = BlockNet(FLOAT16, ARENA);
  // Between convolutions, BatchNorm, Scale, ReLU, Split, Eltwise and
  // Pooling: 16 bits. The input, and what InnerProduct (FLOAT) reads and
  // writes, stay FLOAT.
  ExpectBlockNetStores(*narrow, FLOAT16);
  // Convolutions store FLOAT16 and compute in FLOAT; ReLU runs CAFFE.
  const LayerTypes conv = narrow->layer_by_name("conv2a")->engine().types;
  EXPECT_EQ(conv.forward_storage, FLOAT16);
  EXPECT_EQ(conv.forward_math, FLOAT);
  EXPECT_EQ(narrow->layer_by_name("relu2a")->engine().engine, EngineKind::kCaffe);
  auto wide = BlockNet(FLOAT, ARENA);
  EXPECT_LT(narrow->memory_plan().arena_bytes, wide->memory_plan().arena_bytes);
  const std::string report = FormatMemoryReport(ReportNetMemory(*narrow, 2, 0));
  EXPECT_NE(report.find("forward FLOAT16 (math FLOAT)"), std::string::npos) << report;
}

TEST(F16StorageTest, ANetInFloat16ComputesWhatItComputesInFloat) {
  // Every learned gradient within 5 % of FLOAT's in L2 norm: 0.05-3.3 %
  // here, where bfloat16 (3 bits fewer, and bf16 convolutions) gives
  // 0.2-6.6 %; the convolutions' and BatchNorm's are small residues of
  // large sums (test_bf16_storage.cpp). A lost branch or a misread blob is
  // off by 100 %.
  ExpectBlockNetNearFloat(FLOAT16, 0.002f, 0.05);
}

TEST(F16StorageTest, PlannedAndUnplannedFloat16NetsAreBitIdentical) {
  auto planned = BlockNet(FLOAT16, ARENA);
  auto unplanned = BlockNet(FLOAT16, NONE);
  ASSERT_EQ(planned->blob_by_name("conv2a")->storage_type(), FLOAT16);
  ExpectPlannedMatchesUnplanned(planned.get(), unplanned.get());
}

TEST(F16StorageTest, ResumeInFloat16WithDynamicLossScalingIsBitIdentical) {
  ExpectSixteenBitResumeIsBitIdentical(FLOAT16, MakeSolver);
}

TEST(F16StorageTest, AnOutputWrittenInPlaceStaysFloatInCaffesLayout) {
  // A feature extractor's last blob is written in place by BatchNorm, Scale
  // and ReLU, so layers read it; it is still the net's output, which the
  // user reads as floats in Caffe's layout.
  constexpr char kText[] = R"(
    name: 'features'
    layer { name: 'data' type: 'Input' top: 'data'
            input_param { shape { dim: 2 dim: 3 dim: 8 dim: 8 } } }
    layer { name: 'conv1' type: 'Convolution' bottom: 'data' top: 'conv1'
            convolution_param { num_output: 16 kernel_size: 3 pad: 1
                                weight_filler { type: 'msra' } } }
    layer { name: 'relu1' type: 'ReLU' bottom: 'conv1' top: 'conv1' }
    layer { name: 'conv2' type: 'Convolution' bottom: 'conv1' top: 'conv2'
            convolution_param { num_output: 16 kernel_size: 3 pad: 1
                                weight_filler { type: 'msra' } } }
    layer { name: 'bn2' type: 'BatchNorm' bottom: 'conv2' top: 'conv2' }
    layer { name: 'scale2' type: 'Scale' bottom: 'conv2' top: 'conv2'
            scale_param { bias_term: true } }
    layer { name: 'relu2' type: 'ReLU' bottom: 'conv2' top: 'conv2' }
  )";
  auto build = [&](Type precision) {
    NetParameter param = ParseText<NetParameter>(kText);
    param.mutable_state()->set_phase(TEST);
    ApplyPrecision(precision, &param);
    return std::make_unique<Net>(param, Context());
  };
  auto narrow = build(FLOAT16);
  if (narrow->blob_by_name("conv1")->storage_type() != FLOAT16) {
    GTEST_SKIP() << "this build stores no FLOAT16 blobs on a CPU";
  }
  const Blob& output = *narrow->output_blobs().at(0);
  EXPECT_EQ(narrow->blob_names()[narrow->output_blob_indices()[0]], "conv2");
  EXPECT_EQ(output.storage_type(), FLOAT);
  EXPECT_EQ(output.channel_block(), 1);
  // And it holds what the FLOAT net computes, in the same order.
  auto wide = build(FLOAT);
  NetParameter weights;
  wide->ToProto(&weights);
  narrow->CopyTrainedLayersFrom(weights);
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (Net* net : {narrow.get(), wide.get()}) {
    std::mt19937 same = random;
    float* data = net->input_blobs()[0]->mutable_cpu_data();
    for (int64_t i = 0; i < net->input_blobs()[0]->count(); ++i) data[i] = uniform(same);
    net->Forward();
  }
  const float* got = narrow->output_blobs()[0]->cpu_data();
  const float* want = wide->output_blobs()[0]->cpu_data();
  float largest = 0;
  for (int64_t i = 0; i < output.count(); ++i) largest = std::max(largest, std::fabs(want[i]));
  ASSERT_GT(largest, 0.0f);
  for (int64_t i = 0; i < output.count(); ++i) {
    ASSERT_NEAR(got[i], want[i], 0.03f * largest) << i;
  }
}

}  // namespace
}  // namespace demi
