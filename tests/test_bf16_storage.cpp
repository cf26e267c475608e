// Blobs stored in BFLOAT16 (Blob::storage_type()): the layers that read and
// write them against the same layers in FLOAT on the same (bfloat16)
// numbers, and a net that stores the blobs between such layers in 16 bits.
//
// Tolerance: a 16-bit layer rounds what it stores to bfloat16 (2^-9
// relative) and sums in FLOAT in its own order, so every value must lie
// within 1 % of the largest magnitude of the FLOAT layer's tensor. Reading
// bfloat16 bytes as floats, or the wrong formula, misses that by orders of
// magnitude.
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "demi/memory/report.hpp"
#include "demi/net.hpp"
#include "demi/net_schedule.hpp"
#include "demi/util/dnnl.hpp"
#include "layer_compare_util.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

constexpr char kBf16Storage[] = " forward_type: BFLOAT16 backward_type: BFLOAT16";
constexpr float kTolerance = 0.01f;

/// `blob`'s data (or diff) as floats in Caffe's layout, whatever its
/// storage type and channel block.
std::vector<float> ValuesOf(const Blob& blob, bool diff) {
  std::vector<float> stored(blob.count());
  if (blob.storage_type() == BFLOAT16) {
    const bfloat16* values = diff ? blob.cpu_diff_as<bfloat16>() : blob.cpu_data_as<bfloat16>();
    std::copy(values, values + blob.count(), stored.begin());
  } else {
    const float* values = diff ? blob.cpu_diff() : blob.cpu_data();
    std::copy(values, values + blob.count(), stored.begin());
  }
  if (blob.channel_block() == 1) return stored;
  std::vector<float> caffe(stored.size());
  CopyChannels(blob, stored.data(), blob.channel_block(), caffe.data(), 1);
  return caffe;
}

/// Writes `caffe` (values in Caffe's layout) into `blob`'s data or diff in
/// its layout and storage type.
void StoreValues(Blob* blob, const std::vector<float>& caffe, bool diff) {
  std::vector<float> stored = caffe;
  if (blob->channel_block() > 1) {
    CopyChannels(*blob, caffe.data(), 1, stored.data(), blob->channel_block());
  }
  if (blob->storage_type() == BFLOAT16) {
    bfloat16* values =
        diff ? blob->mutable_cpu_diff_as<bfloat16>() : blob->mutable_cpu_data_as<bfloat16>();
    std::copy(stored.begin(), stored.end(), values);
  } else {
    float* values = diff ? blob->mutable_cpu_diff() : blob->mutable_cpu_data();
    std::copy(stored.begin(), stored.end(), values);
  }
}

/// Gaussian values already rounded to bfloat16, so both layers read the
/// same numbers.
std::vector<float> RoundedGaussian(int64_t count, uint32_t seed) {
  Blob blob(std::vector<int64_t>{count});
  FillGaussian(&blob, seed);
  std::vector<float> values = DataOf(blob);
  for (float& value : values) value = bfloat16(value);
  return values;
}

void ExpectWithinTolerance(const std::vector<float>& actual, const std::vector<float>& expected,
                           const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  float largest = 0;
  for (float value : expected) largest = std::max(largest, std::abs(value));
  ASSERT_GT(largest, 0.0f) << what << ": the FLOAT layer's tensor is all zeros";
  int reported = 0;
  for (size_t i = 0; i < actual.size() && reported < 5; ++i) {
    if (!(std::abs(actual[i] - expected[i]) <= kTolerance * largest)) {
      ADD_FAILURE() << what << "[" << i << "]: " << actual[i] << " vs FLOAT " << expected[i]
                    << " (largest " << largest << ")";
      ++reported;
    }
  }
}

struct StorageCase {
  std::string layer;
  int bottoms = 1;
  int tops = 1;
  std::vector<int64_t> shape = {2, 16, 5, 3};
};

/// The layer with BFLOAT16 blobs (in channel blocks of `block`) against the
/// FLOAT layer in Caffe's layout: tops, bottom gradients, param gradients.
void ExpectStoresBfloat16LikeFloat(const StorageCase& c, int block) {
  std::vector<std::unique_ptr<Blob>> owned;
  auto add = [&owned](std::vector<Blob*>* blobs, Type type, int blob_block,
                      const std::vector<int64_t>& shape) {
    owned.push_back(std::make_unique<Blob>());
    Blob* blob = owned.back().get();
    blob->set_storage_type(type);
    blob->set_channel_block(blob_block);
    blob->Reshape(shape);
    blobs->push_back(blob);
  };
  std::vector<Blob*> ref_bottom, ref_top, narrow_bottom, narrow_top;
  for (int i = 0; i < c.bottoms; ++i) {
    add(&ref_bottom, FLOAT, 1, c.shape);
    add(&narrow_bottom, BFLOAT16, block, c.shape);
  }
  for (int i = 0; i < c.tops; ++i) {
    add(&ref_top, FLOAT, 1, {});
    add(&narrow_top, BFLOAT16, block, {});
  }
  // Named bottoms and tops, none in place.
  std::string wiring;
  for (int i = 0; i < c.bottoms; ++i) wiring += StrCat(" bottom: 'x", i, "'");
  for (int i = 0; i < c.tops; ++i) wiring += StrCat(" top: 'y", i, "'");
  auto reference = MakeDnnlLayer(c.layer + wiring);
  auto narrow = MakeDnnlLayer(c.layer + wiring + kBf16Storage);
  reference->SetUp(ref_bottom, ref_top);
  narrow->SetUp(narrow_bottom, narrow_top);
  if (narrow->running_engine() != EngineKind::kDnnl &&
      reference->running_engine() == EngineKind::kDnnl) {
    GTEST_SKIP() << "oneDNN has no bfloat16 kernel for this layer on this CPU";
  }
  ASSERT_NE(narrow->bfloat16_blobs(), BlobFormats::kNone) << c.layer;
  for (size_t p = 0; p < reference->blobs().size(); ++p) {
    narrow->blobs()[p]->CopyFrom(*reference->blobs()[p]);
  }
  for (int i = 0; i < c.bottoms; ++i) {
    const std::vector<float> x = RoundedGaussian(ref_bottom[i]->count(), 11 + i);
    StoreValues(ref_bottom[i], x, false);
    StoreValues(narrow_bottom[i], x, false);
  }
  reference->Forward(ref_bottom, ref_top);
  narrow->Forward(narrow_bottom, narrow_top);
  for (int i = 0; i < c.tops; ++i) {
    ExpectWithinTolerance(ValuesOf(*narrow_top[i], false), ValuesOf(*ref_top[i], false),
                          StrCat(c.layer, " top ", i));
    const std::vector<float> dy = RoundedGaussian(ref_top[i]->count(), 31 + i);
    StoreValues(ref_top[i], dy, true);
    StoreValues(narrow_top[i], dy, true);
  }
  const std::vector<bool> propagate_down(c.bottoms, true);
  reference->Backward(ref_top, propagate_down, ref_bottom);
  narrow->Backward(narrow_top, propagate_down, narrow_bottom);
  for (int i = 0; i < c.bottoms; ++i) {
    ExpectWithinTolerance(ValuesOf(*narrow_bottom[i], true), ValuesOf(*ref_bottom[i], true),
                          StrCat(c.layer, " bottom gradient ", i));
  }
  for (size_t p = 0; p < reference->blobs().size(); ++p) {
    if (!reference->param_propagate_down(static_cast<int>(p))) continue;
    ExpectWithinTolerance(DiffOf(*narrow->blobs()[p]), DiffOf(*reference->blobs()[p]),
                          StrCat(c.layer, " param gradient ", p));
  }
}

/// In Caffe's layout, and in oneDNN's channel blocks where the CPU has them.
void ExpectStoresBfloat16LikeFloat(const StorageCase& c) {
  {
    SCOPED_TRACE("Caffe's layout");
    ExpectStoresBfloat16LikeFloat(c, 1);
  }
  const int block = DnnlChannelBlock();
  if (block > 1 && c.shape.size() == 4 && c.shape[1] % block == 0) {
    SCOPED_TRACE(StrCat("channels in blocks of ", block));
    ExpectStoresBfloat16LikeFloat(c, block);
  }
}

constexpr char kFillers[] =
    " weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' std: 0.3 }";

TEST(Bf16StorageTest, Convolution) {
  ExpectStoresBfloat16LikeFloat(
      {StrCat("type: 'Convolution' forward_math: BFLOAT16 backward_math: BFLOAT16 "
              "convolution_param { num_output: 16 kernel_size: 3 pad: 1",
              kFillers, " }")});
  // A 1x1 kernel over Caffe's layout runs oneDNN's plain (GEMM) kernel.
  ExpectStoresBfloat16LikeFloat(
      {StrCat("type: 'Convolution' forward_math: BFLOAT16 backward_math: BFLOAT16 "
              "convolution_param { num_output: 32 kernel_size: 1",
              kFillers, " }")});
}

TEST(Bf16StorageTest, ConvolutionStoringBfloat16InFloatMath) {
  // The primitive runs FLOAT; its inputs and outputs are reordered.
  ExpectStoresBfloat16LikeFloat(
      {StrCat("type: 'Convolution' convolution_param { num_output: 16 kernel_size: 3 stride: 2",
              kFillers, " }")});
}

TEST(Bf16StorageTest, BatchNorm) {
  ExpectStoresBfloat16LikeFloat({"type: 'BatchNorm'"});
  ExpectStoresBfloat16LikeFloat(
      {"type: 'BatchNorm' batch_norm_param { use_global_stats: false scale_bias: true "
       "scale_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 } }"});
}

TEST(Bf16StorageTest, Scale) {
  ExpectStoresBfloat16LikeFloat(
      {"type: 'Scale' scale_param { bias_term: true filler { type: 'gaussian' std: 1 } "
       "bias_filler { type: 'gaussian' std: 1 } }"});
}

TEST(Bf16StorageTest, ReLU) { ExpectStoresBfloat16LikeFloat({"type: 'ReLU'"}); }

TEST(Bf16StorageTest, EltwiseSum) {
  ExpectStoresBfloat16LikeFloat(
      {"type: 'Eltwise' eltwise_param { operation: SUM coeff: 1 coeff: -0.5 }", 2});
}

TEST(Bf16StorageTest, Pooling) {
  ExpectStoresBfloat16LikeFloat(
      {"type: 'Pooling' pooling_param { pool: MAX kernel_size: 3 stride: 2 }",
       1,
       1,
       {2, 16, 7, 7}});
  ExpectStoresBfloat16LikeFloat(
      {"type: 'Pooling' pooling_param { pool: AVE kernel_size: 2 stride: 2 }",
       1,
       1,
       {2, 16, 6, 6}});
}

TEST(Bf16StorageTest, LRN) {
  ExpectStoresBfloat16LikeFloat({"type: 'LRN' lrn_param { local_size: 5 alpha: 0.1 beta: 0.75 }"});
}

TEST(Bf16StorageTest, Concat) {
  // Along channels, in whole channel blocks.
  ExpectStoresBfloat16LikeFloat({"type: 'Concat'", 3, 1});
}

TEST(Bf16StorageTest, Split) {
  // Split runs the CAFFE engine, whose CPU code stores BFLOAT16 too.
  ExpectStoresBfloat16LikeFloat({"type: 'Split'", 1, 3});
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
  ExpectErrorContaining([&] { blob.set_storage_type(FLOAT16); },
                        {"FLOAT or BFLOAT16, not FLOAT16"});
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
  // The bulk rounding (AVX-512 where the CPU has it) gives the same bits as
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

// A ResNet basic block: convolutions, in-place BatchNorm + Scale + ReLU, a
// branch (Split), a sum, pooling, then FLOAT layers.
constexpr char kBlockNet[] = R"(
  name: 'block'
  layer { name: 'data' type: 'Input' top: 'data' top: 'label'
          input_param { shape { dim: 4 dim: 3 dim: 12 dim: 12 } shape { dim: 4 } } }
  layer { name: 'conv1' type: 'Convolution' bottom: 'data' top: 'conv1'
          convolution_param { num_output: 16 kernel_size: 3 pad: 1 bias_term: false
                              weight_filler { type: 'msra' } } }
  layer { name: 'bn1' type: 'BatchNorm' bottom: 'conv1' top: 'conv1' }
  layer { name: 'scale1' type: 'Scale' bottom: 'conv1' top: 'conv1'
          scale_param { bias_term: true } }
  layer { name: 'relu1' type: 'ReLU' bottom: 'conv1' top: 'conv1' }
  layer { name: 'conv2a' type: 'Convolution' bottom: 'conv1' top: 'conv2a'
          convolution_param { num_output: 16 kernel_size: 3 pad: 1 bias_term: false
                              weight_filler { type: 'msra' } } }
  layer { name: 'bn2a' type: 'BatchNorm' bottom: 'conv2a' top: 'conv2a' }
  layer { name: 'scale2a' type: 'Scale' bottom: 'conv2a' top: 'conv2a'
          scale_param { bias_term: true } }
  layer { name: 'relu2a' type: 'ReLU' bottom: 'conv2a' top: 'conv2a' }
  layer { name: 'conv2b' type: 'Convolution' bottom: 'conv2a' top: 'conv2b'
          convolution_param { num_output: 16 kernel_size: 3 pad: 1 bias_term: false
                              weight_filler { type: 'msra' } } }
  layer { name: 'bn2b' type: 'BatchNorm' bottom: 'conv2b' top: 'conv2b' }
  layer { name: 'scale2b' type: 'Scale' bottom: 'conv2b' top: 'conv2b'
          scale_param { bias_term: true } }
  layer { name: 'sum' type: 'Eltwise' bottom: 'conv1' bottom: 'conv2b' top: 'sum' }
  layer { name: 'relu_sum' type: 'ReLU' bottom: 'sum' top: 'sum' }
  layer { name: 'pool' type: 'Pooling' bottom: 'sum' top: 'pool'
          pooling_param { pool: AVE kernel_size: 3 stride: 2 } }
  layer { name: 'ip' type: 'InnerProduct' bottom: 'pool' top: 'ip'
          inner_product_param { num_output: 3 weight_filler { type: 'xavier' } } }
  layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip' bottom: 'label' top: 'loss' }
)";

std::unique_ptr<Net> BlockNet(Type precision, MemoryOptimization memory) {
  NetParameter param = ParseText<NetParameter>(kBlockNet);
  param.mutable_state()->set_phase(TRAIN);
  param.set_memory_optimization(memory);
  ApplyPrecision(precision, &param);
  return std::make_unique<Net>(param, Context());
}

/// One forward and backward of `net` on fixed inputs, from `weights`.
float RunOnce(Net* net, const NetParameter& weights) {
  net->CopyTrainedLayersFrom(weights);
  Blob& data = *net->input_blobs()[0];
  StoreValues(&data, RoundedGaussian(data.count(), 5), false);
  FillValues(net->input_blobs()[1], {0, 1, 2, 1});
  net->ClearParamDiffs();
  const float loss = net->Forward();
  net->Backward();
  return loss;
}

bool StoresBfloat16(const Net& net) {
  return net.blob_by_name("conv2a")->storage_type() == BFLOAT16;
}

TEST(Bf16StorageTest, ANetStoresTheBlobsBetweenSixteenBitLayersInBfloat16) {
  auto narrow = BlockNet(BFLOAT16, ARENA);
  if (!StoresBfloat16(*narrow)) GTEST_SKIP() << "oneDNN has no bfloat16 kernels on this CPU";
  // Between convolutions, BatchNorm, Scale, ReLU, Split, Eltwise, Pooling:
  // 16 bits. The input, and what InnerProduct (FLOAT) reads, stay FLOAT.
  for (const char* name : {"conv1", "conv2a", "conv2b", "sum"}) {
    const Blob& blob = *narrow->blob_by_name(name);
    EXPECT_EQ(blob.storage_type(), BFLOAT16) << name;
    EXPECT_EQ(blob.data()->size(), static_cast<size_t>(blob.count()) * 2) << name;
  }
  for (const char* name : {"data", "pool", "ip"}) {
    EXPECT_EQ(narrow->blob_by_name(name)->storage_type(), FLOAT) << name;
  }
  // The planner places the smaller blobs: a smaller arena.
  auto wide = BlockNet(FLOAT, ARENA);
  EXPECT_EQ(wide->blob_by_name("conv2a")->storage_type(), FLOAT);
  EXPECT_LT(narrow->memory_plan().arena_bytes, wide->memory_plan().arena_bytes);
  EXPECT_LT(narrow->memory_plan().naive_bytes, wide->memory_plan().naive_bytes);
  // The report says which types each layer runs.
  const std::string report = FormatMemoryReport(ReportNetMemory(*narrow, 2, 0));
  EXPECT_NE(report.find("forward BFLOAT16 (math BFLOAT16)"), std::string::npos) << report;
}

TEST(Bf16StorageTest, ANetInBfloat16ComputesWhatItComputesInFloat) {
  auto narrow = BlockNet(BFLOAT16, ARENA);
  if (!StoresBfloat16(*narrow)) GTEST_SKIP() << "oneDNN has no bfloat16 kernels on this CPU";
  auto wide = BlockNet(FLOAT, ARENA);
  NetParameter weights;
  wide->ToProto(&weights);
  const float loss_float = RunOnce(wide.get(), weights);
  const float loss_bf16 = RunOnce(narrow.get(), weights);
  EXPECT_NEAR(loss_bf16, loss_float, 0.01f * loss_float);
  // Every learned gradient within 10 % of its FLOAT value in L2 norm. The
  // convolutions' weight gradients behind a BatchNorm are small residues of
  // large sums (BatchNorm cancels any scaling of the weights), so bfloat16
  // costs them more than 2^-9: 0.2-6.6 % here, and 0.4-6.2 % with FLOAT
  // storage and only the convolutions' math in bfloat16. A lost branch or a
  // misread blob is off by 100 %.
  for (size_t p = 0; p < wide->learnable_params().size(); ++p) {
    const std::vector<float> expected = DiffOf(*wide->learnable_params()[p]);
    const std::vector<float> actual = DiffOf(*narrow->learnable_params()[p]);
    double error = 0, norm = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      error += (actual[i] - expected[i]) * (actual[i] - expected[i]);
      norm += static_cast<double>(expected[i]) * expected[i];
    }
    EXPECT_LE(std::sqrt(error), 0.1 * std::sqrt(norm)) << wide->param_display_names()[p];
  }
}

TEST(Bf16StorageTest, PlannedAndUnplannedBfloat16NetsAreBitIdentical) {
  auto planned = BlockNet(BFLOAT16, ARENA);
  if (!StoresBfloat16(*planned)) GTEST_SKIP() << "oneDNN has no bfloat16 kernels on this CPU";
  auto unplanned = BlockNet(BFLOAT16, NONE);
  NetParameter weights;
  planned->ToProto(&weights);
  for (int step = 0; step < 2; ++step) {  // the second reads what the first left in the arena
    EXPECT_EQ(RunOnce(planned.get(), weights), RunOnce(unplanned.get(), weights));
    for (size_t p = 0; p < planned->learnable_params().size(); ++p) {
      EXPECT_EQ(DiffOf(*planned->learnable_params()[p]), DiffOf(*unplanned->learnable_params()[p]))
          << planned->param_display_names()[p];
    }
  }
}

/// SGD on the block net fed by DummyData, in BFLOAT16 with GradScaler's
/// dynamic loss scaling, as the solver text of `max_iter` iterations.
std::string Bf16Solver(const std::string& prefix, int max_iter, const std::string& extra = "") {
  NetParameter net = ParseText<NetParameter>(kBlockNet);
  LayerParameter& data = *net.mutable_layer(0);
  data = ParseText<LayerParameter>(R"(
    name: 'data' type: 'DummyData' top: 'data' top: 'label'
    dummy_data_param { shape { dim: 4 dim: 3 dim: 12 dim: 12 } shape { dim: 4 }
                       data_filler { type: 'gaussian' }
                       data_filler { type: 'uniform' min: 0 max: 2.99 } })");
  net.set_global_grad_scale_adaptive(true);
  std::string text;
  google::protobuf::TextFormat::PrintToString(net, &text);
  return StrCat("net_param {", text, R"(} type: "SGD" base_lr: 0.05 momentum: 0.9
    lr_policy: "fixed" random_seed: 3 precision: BFLOAT16 snapshot_prefix: ")",
                prefix, "\" max_iter: ", max_iter, " ", extra);
}

TEST(Bf16StorageTest, ResumeInBfloat16WithDynamicLossScalingIsBitIdentical) {
  ScratchDir dir;
  auto straight = MakeSolver(Bf16Solver(dir.file("straight"), 6));
  if (!StoresBfloat16(straight->net())) {
    GTEST_SKIP() << "oneDNN has no bfloat16 kernels on this CPU";
  }
  straight->Solve();
  auto first_half = MakeSolver(Bf16Solver(dir.file("split"), 3, "snapshot_after_train: true"));
  first_half->Solve();
  auto second_half = MakeSolver(Bf16Solver(dir.file("split"), 6));
  second_half->Solve(dir.file("split_iter_3.solverstate"));
  EXPECT_EQ(second_half->iter(), 6);
  EXPECT_EQ(AllParams(second_half->net()), AllParams(straight->net()));
  EXPECT_EQ(AllHistory(*second_half), AllHistory(*straight));
  EXPECT_EQ(second_half->loss_scaler().scale(), straight->loss_scaler().scale());
  EXPECT_NE(AllParams(first_half->net()), AllParams(straight->net()));
}

}  // namespace
}  // namespace demi
