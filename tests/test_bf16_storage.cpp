// Blobs stored in BFLOAT16 (Blob::storage_type()): the layers that read and
// write them against the same layers in FLOAT on the same (bfloat16)
// numbers, and a net that stores the blobs between such layers in 16 bits
// (storage_compare_util.hpp states the tolerance).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "demi/memory/report.hpp"
#include "demi/net_schedule.hpp"
#include "demi/util/dnnl.hpp"
#include "storage_compare_util.hpp"

namespace demi {
namespace {

/// The layer of `c` in BFLOAT16 against FLOAT.
void ExpectStoresBfloat16LikeFloat(const StorageCase& c) { ExpectStoresLikeFloat(c, BFLOAT16); }

TEST(Bf16StorageTest, Convolution) {
  ExpectStoresBfloat16LikeFloat(
      {StrCat("type: 'Convolution' forward_math: BFLOAT16 backward_math: BFLOAT16 "
              "convolution_param { num_output: 16 kernel_size: 3 pad: 1",
              kStorageFillers, " }")});
  // A 1x1 kernel over Caffe's layout runs oneDNN's plain (GEMM) kernel.
  ExpectStoresBfloat16LikeFloat(
      {StrCat("type: 'Convolution' forward_math: BFLOAT16 backward_math: BFLOAT16 "
              "convolution_param { num_output: 32 kernel_size: 1",
              kStorageFillers, " }")});
}

TEST(Bf16StorageTest, ConvolutionStoringBfloat16InFloatMath) {
  // The primitive runs FLOAT; its inputs and outputs are reordered.
  ExpectStoresBfloat16LikeFloat(
      {StrCat("type: 'Convolution' convolution_param { num_output: 16 kernel_size: 3 stride: 2",
              kStorageFillers, " }")});
}

TEST(Bf16StorageTest, BatchNorm) { ExpectCasesStoreLikeFloat("BatchNorm", BFLOAT16); }

TEST(Bf16StorageTest, Scale) { ExpectCasesStoreLikeFloat("Scale", BFLOAT16); }

TEST(Bf16StorageTest, ReLU) { ExpectStoresBfloat16LikeFloat({"type: 'ReLU'"}); }

TEST(Bf16StorageTest, MappedNeuronLayers) {
  ExpectMappedNeuronsStoreLikeFloat(BFLOAT16, Device::kCPU);
}

TEST(Bf16StorageTest, EltwiseSum) { ExpectCasesStoreLikeFloat("Eltwise", BFLOAT16); }

TEST(Bf16StorageTest, Pooling) { ExpectCasesStoreLikeFloat("Pooling", BFLOAT16); }

TEST(Bf16StorageTest, LRN) {
  ExpectStoresBfloat16LikeFloat({"type: 'LRN' lrn_param { local_size: 5 alpha: 0.1 beta: 0.75 }"});
  // Images of 2 MiB in FLOAT: three a call (a chunk of 8 MiB at most), two
  // calls a pass, the bottom's and the top's bytes per image differing.
  StorageCase chunked{"type: 'LRN' lrn_param { local_size: 5 alpha: 0.1 beta: 0.75 }"};
  chunked.shape = {6, 16, 256, 128};
  chunked.float_tops = true;
  ExpectStoresBfloat16LikeFloat(chunked);
}

TEST(Bf16StorageTest, Concat) { ExpectCasesStoreLikeFloat("Concat", BFLOAT16); }

TEST(Bf16StorageTest, Split) {
  // Split runs the CAFFE engine, whose CPU code stores BFLOAT16 too.
  ExpectCasesStoreLikeFloat("Split", BFLOAT16);
}

TEST(Bf16StorageTest, FloatAccessorsRefuseABfloat16Blob) {
  Blob blob(std::vector<int64_t>{2, 3});
  blob.set_storage_type(BFLOAT16);
  EXPECT_EQ(blob.data()->size(), 12u);  // two bytes each
  ExpectErrorContaining([&] { blob.cpu_data(); }, {"shape 2 3 (6)", "stored in BFLOAT16"});
  ExpectErrorContaining([&] { blob.mutable_cpu_diff(); }, {"stored in BFLOAT16, not FLOAT"});
  bfloat16* values = blob.mutable_cpu_data_as<bfloat16>();
  std::fill(values, values + 6, bfloat16(0.0f));
  values[1] = -2.0f;
  EXPECT_EQ(blob.asum_data(), 2.0);
  ExpectErrorContaining([&] { blob.set_storage_type(DOUBLE); },
                        {"FLOAT, BFLOAT16 or FLOAT16, not DOUBLE"});
  // Sharing memory across storage types is an Error, not an abort.
  Blob wide(std::vector<int64_t>{2, 3});
  ExpectErrorContaining([&] { wide.ShareData(blob); },
                        {"ShareData needs equal counts and storage types", "in BFLOAT16"});
}

TEST(Bf16StorageTest, RoundsToNearestEven) {
  EXPECT_EQ(static_cast<float>(bfloat16(1.0f)), 1.0f);
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to the even one, 1.
  EXPECT_EQ(static_cast<float>(bfloat16(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(static_cast<float>(bfloat16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(static_cast<float>(bfloat16(INFINITY))));
  // The bulk rounding (AVX-512 or AVX2 where the CPU has it) gives the same bits as
  // the scalar one: random bit patterns (NaNs, infinities, denormals, ties
  // among them), over a length that leaves a tail.
  std::mt19937 random(7);
  std::vector<float> values(1000 + 13);
  for (float& value : values) {
    const uint32_t bits = random();
    std::memcpy(&value, &bits, sizeof(value));
  }
  values[3] = 1.0f + 1.0f / 256;  // a tie
  values[4] = 1e-40f;             // a denormal
  std::vector<bfloat16> bulk(values.size());
  RoundToBfloat16(static_cast<int64_t>(values.size()), values.data(), bulk.data());
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(bulk[i].bits, bfloat16::Round(values[i])) << i << ": " << values[i];
  }
}

bool StoresBfloat16(const Net& net) {
  return net.blob_by_name("conv2a")->storage_type() == BFLOAT16;
}

TEST(Bf16StorageTest, ANetStoresTheBlobsBetweenSixteenBitLayersInBfloat16) {
  auto narrow = BlockNet(BFLOAT16, ARENA);
  ASSERT_TRUE(StoresBfloat16(*narrow));
  // Between convolutions, BatchNorm, Scale, ReLU, Split, Eltwise, Pooling:
  // 16 bits. The input, and what InnerProduct (FLOAT) reads, stay FLOAT.
  ExpectBlockNetStores(*narrow, BFLOAT16);
  // The planner places the smaller blobs: a smaller arena.
  auto wide = BlockNet(FLOAT, ARENA);
  EXPECT_EQ(wide->blob_by_name("conv2a")->storage_type(), FLOAT);
  EXPECT_LT(narrow->memory_plan().arena_bytes, wide->memory_plan().arena_bytes);
  EXPECT_LT(narrow->memory_plan().naive_bytes, wide->memory_plan().naive_bytes);
  // The report says which types each layer runs.
  const std::string report = FormatMemoryReport(ReportNetMemory(*narrow, 2, 0));
  // (Its convolutions' math: FLOAT where oneDNN computes no bfloat16.)
  const std::string math = DnnlComputesBfloat16() ? "BFLOAT16" : "FLOAT";
  EXPECT_NE(report.find(StrCat("forward BFLOAT16 (math ", math, ")")), std::string::npos) << report;
}

TEST(Bf16StorageTest, ANetInBfloat16ComputesWhatItComputesInFloat) {
  auto narrow = BlockNet(BFLOAT16, ARENA);
  ASSERT_TRUE(StoresBfloat16(*narrow));
  // Every learned gradient within 10 % of its FLOAT value in L2 norm. The
  // convolutions' weight gradients behind a BatchNorm are small residues of
  // large sums (BatchNorm cancels any scaling of the weights), so bfloat16
  // costs them more than 2^-9: 0.2-6.6 % here, and 0.4-6.2 % with FLOAT
  // storage and only the convolutions' math in bfloat16. A lost branch or a
  // misread blob is off by 100 %.
  ExpectBlockNetNearFloat(BFLOAT16, 0.01f, 0.1);
}

TEST(Bf16StorageTest, PlannedAndUnplannedBfloat16NetsAreBitIdentical) {
  auto planned = BlockNet(BFLOAT16, ARENA);
  ASSERT_TRUE(StoresBfloat16(*planned));
  auto unplanned = BlockNet(BFLOAT16, NONE);
  ExpectPlannedMatchesUnplanned(planned.get(), unplanned.get());
}

TEST(Bf16StorageTest, ResumeInBfloat16WithDynamicLossScalingIsBitIdentical) {
  ASSERT_TRUE(StoresBfloat16(*BlockNet(BFLOAT16, ARENA)));
  ExpectSixteenBitResumeIsBitIdentical(BFLOAT16, MakeSolver);
}

}  // namespace
}  // namespace demi
