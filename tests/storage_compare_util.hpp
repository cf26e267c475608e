#ifndef DEMI_TESTS_STORAGE_COMPARE_UTIL_HPP_
#define DEMI_TESTS_STORAGE_COMPARE_UTIL_HPP_
// A layer whose blobs are stored in a 16-bit type (Blob::storage_type():
// BFLOAT16 or FLOAT16) against the same layer in FLOAT on the same 16-bit
// numbers, and a ResNet block net that stores the blobs between such layers
// in 16 bits.
//
// Tolerance: a 16-bit layer rounds what it stores (bfloat16: 2^-9 relative,
// float16: 2^-12) and sums in FLOAT in its own order, so every value must
// lie within 1 % of the largest magnitude of the FLOAT layer's tensor.
// Reading 16-bit bytes as floats, or the wrong formula, misses that by
// orders of magnitude.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "demi/net.hpp"
#include "demi/util/dnnl.hpp"
#include "layer_compare_util.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

constexpr float kStorageTolerance = 0.01f;

/// " forward_type: T backward_type: T": a layer storing `type` both ways.
inline std::string StorageFields(Type type) {
  return StrCat(" forward_type: ", Type_Name(type), " backward_type: ", Type_Name(type));
}

/// `blob`'s data (or diff) as floats in Caffe's layout, whatever its
/// storage type and channel block.
inline std::vector<float> ValuesOf(const Blob& blob, bool diff) {
  std::vector<float> stored(blob.count());
  VisitStorageType(blob.storage_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* values = diff ? blob.cpu_diff_as<T>() : blob.cpu_data_as<T>();
    std::transform(values, values + blob.count(), stored.begin(),
                   [](T value) { return static_cast<float>(value); });
  });
  if (blob.channel_block() == 1) return stored;
  std::vector<float> caffe(stored.size());
  CopyChannels(blob, stored.data(), blob.channel_block(), caffe.data(), 1);
  return caffe;
}

/// Writes `caffe` (values in Caffe's layout) into `blob`'s data or diff in
/// its layout and storage type.
inline void StoreValues(Blob* blob, const std::vector<float>& caffe, bool diff) {
  std::vector<float> stored = caffe;
  if (blob->channel_block() > 1) {
    CopyChannels(*blob, caffe.data(), 1, stored.data(), blob->channel_block());
  }
  VisitStorageType(blob->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    T* values = diff ? blob->mutable_cpu_diff_as<T>() : blob->mutable_cpu_data_as<T>();
    std::transform(stored.begin(), stored.end(), values, [](float value) { return T(value); });
  });
}

/// Gaussian values already rounded to `type`, so both layers read the same
/// numbers.
inline std::vector<float> RoundedGaussian(int64_t count, uint32_t seed, Type type) {
  Blob blob(std::vector<int64_t>{count});
  FillGaussian(&blob, seed);
  std::vector<float> values = DataOf(blob);
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    for (float& value : values) value = static_cast<float>(T(value));
  });
  return values;
}

inline void ExpectWithinTolerance(const std::vector<float>& actual,
                                  const std::vector<float>& expected, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  float largest = 0;
  for (float value : expected) largest = std::max(largest, std::abs(value));
  ASSERT_GT(largest, 0.0f) << what << ": the FLOAT layer's tensor is all zeros";
  int reported = 0;
  for (size_t i = 0; i < actual.size() && reported < 5; ++i) {
    if (!(std::abs(actual[i] - expected[i]) <= kStorageTolerance * largest)) {
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
  /// The 16-bit layer's bottoms (or tops) stored in FLOAT: a layer whose
  /// blobs each take their own type (BlobFormats::kPerBlob).
  bool float_bottoms = false;
  bool float_tops = false;
  /// With kChannelsLast: the 16-bit bottoms (or tops) in Caffe's layout, as
  /// a layer taking each blob's layout (kPerBlob) may meet them.
  bool caffe_layout_bottoms = false;
  bool caffe_layout_tops = false;
  /// Where given, bottom i has bottom_channels[i] channels (Concat's parts).
  std::vector<int64_t> bottom_channels = {};
  /// One bottom computed in place (both layers): its top is the bottom.
  bool in_place = false;
  /// False for a layer without gradients (Threshold): Forward only.
  bool backward = true;
  /// Fields of the 16-bit layer alone (its math types), after the storage
  /// types.
  std::string narrow_fields = {};
};

/// ExpectStoresLikeFloat's `block` for channels last (NHWC, the GPU's
/// layout: Blob::channels_last()), given to the 16-bit blobs of more than
/// one channel and pixel.
constexpr int kChannelsLast = -1;

/// The channel block ExpectStoresLikeFloat gives a blob of `shape` stored
/// in `type`, for `block` (a block size, 1, or kChannelsLast).
inline int CaseBlock(int block, Type type, bool caffe_layout, const std::vector<int64_t>& shape) {
  if (block != kChannelsLast) return block;
  const bool takes = type != FLOAT && !caffe_layout && shape.size() == 4 && shape[1] > 1 &&
                     shape[2] * shape[3] > 1;
  return takes ? static_cast<int>(shape[1]) : 1;
}

/// The layer with blobs stored in `type` (in channel blocks of `block`)
/// against the FLOAT layer in Caffe's layout, both on `device` (the CPU's
/// with the DNNL engine where it has one): tops, bottom gradients, param
/// gradients.
inline void ExpectStoresLikeFloat(const StorageCase& c, Type type, int block,
                                  Device device = Device::kCPU) {
  std::vector<std::unique_ptr<Blob>> owned;
  auto add = [&owned](std::vector<Blob*>* blobs, Type blob_type, int blob_block,
                      const std::vector<int64_t>& shape) {
    owned.push_back(std::make_unique<Blob>());
    Blob* blob = owned.back().get();
    blob->set_storage_type(blob_type);
    blob->set_channel_block(blob_block);
    blob->Reshape(shape);
    blobs->push_back(blob);
  };
  std::vector<Blob*> ref_bottom, ref_top, narrow_bottom, narrow_top;
  const Type bottom_type = c.float_bottoms ? FLOAT : type;
  for (int i = 0; i < c.bottoms; ++i) {
    std::vector<int64_t> shape = c.shape;
    if (!c.bottom_channels.empty()) shape[1] = c.bottom_channels[i];
    add(&ref_bottom, FLOAT, 1, shape);
    add(&narrow_bottom, bottom_type, CaseBlock(block, bottom_type, c.caffe_layout_bottoms, shape),
        shape);
  }
  if (c.in_place) {
    ref_top = ref_bottom;
    narrow_top = narrow_bottom;
  }
  for (int i = 0; i < c.tops && !c.in_place; ++i) {
    add(&ref_top, FLOAT, 1, {});
    add(&narrow_top, c.float_tops ? FLOAT : type, block == kChannelsLast ? 1 : block, {});
  }
  // Named bottoms and tops.
  std::string wiring;
  for (int i = 0; i < c.bottoms; ++i) wiring += StrCat(" bottom: 'x", i, "'");
  for (int i = 0; i < c.tops; ++i) wiring += StrCat(" top: '", c.in_place ? "x" : "y", i, "'");
  auto make = [device](const std::string& text) {
    if (device == Device::kCPU) return MakeDnnlLayer(text);
    std::unique_ptr<Layer> layer = MakeLayer(text);
    Context context;
    context.device = device;
    layer->set_context(context);
    return layer;
  };
  auto reference = make(c.layer + wiring);
  auto narrow = make(c.layer + wiring + StorageFields(type) + c.narrow_fields);
  reference->SetUp(ref_bottom, ref_top);
  narrow->SetUp(narrow_bottom, narrow_top);
  if (block == kChannelsLast) {
    // The tops' shapes are known now: their layout, and the layer reshaped
    // for it (a oneDNN primitive is made for the blobs' layouts).
    for (Blob* top : narrow_top) {
      top->set_channel_block(
          CaseBlock(block, top->storage_type(), c.caffe_layout_tops, top->shape()));
    }
    narrow->Reshape(narrow_bottom, narrow_top);
  }
  // oneDNN may run neither layer here (no AVX-512: its convolutions then
  // refuse Caffe's layout) or only the FLOAT one.
  if (narrow->running_engine() != EngineKind::kDnnl &&
      narrow->engine().engine == EngineKind::kDnnl) {
    GTEST_SKIP() << "oneDNN has no " << Type_Name(type) << " kernel for this layer on this CPU";
  }
  ASSERT_NE(narrow->narrow_blobs(), BlobFormats::kNone) << c.layer;
  if (block == kChannelsLast) {
    ASSERT_NE(narrow->channels_last_layouts(), BlobFormats::kNone)
        << c.layer << ": runs not channels last";
  }
  for (size_t p = 0; p < reference->blobs().size(); ++p) {
    narrow->blobs()[p]->CopyFrom(*reference->blobs()[p]);
  }
  for (int i = 0; i < c.bottoms; ++i) {
    const std::vector<float> x = RoundedGaussian(ref_bottom[i]->count(), 11 + i, type);
    StoreValues(ref_bottom[i], x, false);
    StoreValues(narrow_bottom[i], x, false);
  }
  reference->Forward(ref_bottom, ref_top);
  narrow->Forward(narrow_bottom, narrow_top);
  for (int i = 0; i < c.tops; ++i) {
    ExpectWithinTolerance(ValuesOf(*narrow_top[i], false), ValuesOf(*ref_top[i], false),
                          StrCat(c.layer, " top ", i));
    if (!c.backward) continue;
    const std::vector<float> dy = RoundedGaussian(ref_top[i]->count(), 31 + i, type);
    StoreValues(ref_top[i], dy, true);
    StoreValues(narrow_top[i], dy, true);
  }
  if (!c.backward) return;
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
inline void ExpectStoresLikeFloat(const StorageCase& c, Type type) {
  {
    SCOPED_TRACE("Caffe's layout");
    ExpectStoresLikeFloat(c, type, 1);
  }
  const int block = DnnlChannelBlock();
  if (block > 1 && c.shape.size() == 4 && c.shape[1] % block == 0) {
    SCOPED_TRACE(StrCat("channels in blocks of ", block));
    ExpectStoresLikeFloat(c, type, block);
  }
}

/// The cases of a layer type that stores both 16-bit types, as both test
/// files run them: "BatchNorm", "Scale", "Eltwise", "Pooling", "Concat"
/// (along channels, in whole channel blocks) or "Split".
inline std::vector<StorageCase> StorageCasesOf(const std::string& type) {
  if (type == "BatchNorm") {
    return {{"type: 'BatchNorm'"},
            {"type: 'BatchNorm' batch_norm_param { use_global_stats: false scale_bias: true "
             "scale_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 } }"}};
  }
  if (type == "Scale") {
    return {
        {"type: 'Scale' scale_param { bias_term: true filler { type: 'gaussian' std: 1 } "
         "bias_filler { type: 'gaussian' std: 1 } }"}};
  }
  if (type == "Eltwise") {
    return {{"type: 'Eltwise' eltwise_param { operation: SUM coeff: 1 coeff: -0.5 }", 2}};
  }
  if (type == "Pooling") {
    return {{"type: 'Pooling' pooling_param { pool: MAX kernel_size: 3 stride: 2 }",
             1,
             1,
             {2, 16, 7, 7}},
            {"type: 'Pooling' pooling_param { pool: AVE kernel_size: 2 stride: 2 }",
             1,
             1,
             {2, 16, 6, 6}}};
  }
  if (type == "LRN") {
    return {{"type: 'LRN' lrn_param { local_size: 5 alpha: 0.5 beta: 0.75 }", 1, 1, {2, 16, 5, 4}}};
  }
  if (type == "Concat") return {{"type: 'Concat'", 3, 1}};
  if (type == "Split") return {{"type: 'Split'", 1, 3}};
  ADD_FAILURE() << "no storage cases for " << type;
  return {};
}

/// Every case of StorageCasesOf(layer_type) stored in `type` against FLOAT.
inline void ExpectCasesStoreLikeFloat(const std::string& layer_type, Type type) {
  for (const StorageCase& c : StorageCasesOf(layer_type)) ExpectStoresLikeFloat(c, type);
}

/// The same on GPU 0, in Caffe's layout, or channels last (kChannelsLast).
inline void ExpectCasesStoreLikeFloatOnGpu(const std::string& layer_type, Type type,
                                           int block = 1) {
  for (const StorageCase& c : StorageCasesOf(layer_type)) {
    SCOPED_TRACE(c.layer);
    ExpectStoresLikeFloat(c, type, block, Device::kGPU);
  }
}

/// The neuron layers written as formulas (layers/elementwise.hpp's maps) and
/// PReLU, which store both 16-bit types on both devices, in Caffe's layout (their
/// only one); out of place, and in place those that keep a copy of their
/// input for Backward. Clip's bounds are not 16-bit numbers: its Backward
/// compares the stored top with them.
inline void ExpectMappedNeuronsStoreLikeFloat(Type type, Device device) {
  for (const char* layer : {"type: 'AbsVal'", "type: 'Swish' swish_param { beta: 1.5 }",
                            "type: 'Power' power_param { power: 2 scale: 0.5 shift: 0.25 }",
                            "type: 'PReLU' prelu_param { filler { type: 'gaussian' std: 0.5 } }"}) {
    SCOPED_TRACE(StrCat(layer, " in place"));
    StorageCase c{layer};
    c.in_place = true;
    ExpectStoresLikeFloat(c, type, 1, device);
  }
  StorageCase threshold{"type: 'Threshold' threshold_param { threshold: 0.25 }"};
  threshold.backward = false;
  ExpectStoresLikeFloat(threshold, type, 1, device);
  for (const char* layer :
       {"type: 'Sigmoid'", "type: 'ELU' elu_param { alpha: 0.5 }", "type: 'BNLL'",
        "type: 'Clip' clip_param { min: -0.3 max: 0.7 }",
        "type: 'Exp' exp_param { base: 2 scale: 0.5 shift: 0.1 }", "type: 'TanH'", "type: 'AbsVal'",
        "type: 'Swish' swish_param { beta: 1.5 }",
        "type: 'Power' power_param { power: 2 scale: 0.5 shift: 0.25 }",
        "type: 'Power' power_param { power: 1 scale: -2 shift: 0.5 }",
        "type: 'Log' log_param { base: 2 scale: 0.5 shift: 3 }",
        "type: 'PReLU' prelu_param { filler { type: 'gaussian' std: 0.5 } }",
        "type: 'PReLU' prelu_param { channel_shared: true }"}) {
    SCOPED_TRACE(layer);
    ExpectStoresLikeFloat({layer}, type, 1, device);
  }
}

constexpr char kStorageFillers[] =
    " weight_filler { type: 'gaussian' std: 0.3 } bias_filler { type: 'gaussian' std: 0.3 }";

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

/// The block net at a --precision, on `device`, its BatchNorm + Scale (+
/// ReLU) fused or not (NetParameter.fuse_layers), its blobs channels last
/// where the layers take it or not (NetParameter.channels_last), its cuDNN
/// algorithms chosen by heuristics (kDeterministic) or measured.
inline std::unique_ptr<Net> BlockNet(Type precision, MemoryOptimization memory,
                                     Device device = Device::kCPU, bool fuse_layers = true,
                                     bool channels_last = true,
                                     GpuMath gpu_math = GpuMath::kDeterministic) {
  NetParameter param = ParseText<NetParameter>(kBlockNet);
  param.mutable_state()->set_phase(TRAIN);
  param.set_memory_optimization(memory);
  param.set_fuse_layers(fuse_layers);
  param.set_channels_last(channels_last);
  ApplyPrecision(precision, &param);
  Context context;
  context.device = device;
  context.gpu_math = gpu_math;
  return std::make_unique<Net>(param, context);
}

/// The block net `net` stores its blobs between 16-bit layers in `type`
/// (two bytes each), and its input and what the loss reads in FLOAT; on the
/// CPU, whose InnerProduct stores FLOAT, what it reads too.
inline void ExpectBlockNetStores(const Net& net, Type type, Device device = Device::kCPU) {
  std::vector<const char*> narrow = {"conv1", "conv2a", "conv2b", "sum"};
  std::vector<const char*> wide = {"data", "ip"};
  (device == Device::kGPU ? narrow : wide).push_back("pool");
  for (const char* name : narrow) {
    const Blob& blob = *net.blob_by_name(name);
    EXPECT_EQ(blob.storage_type(), type) << name;
    EXPECT_EQ(blob.data()->size(), static_cast<size_t>(blob.count()) * 2) << name;
  }
  for (const char* name : wide) EXPECT_EQ(net.blob_by_name(name)->storage_type(), FLOAT) << name;
}

/// One forward and backward of `net` on fixed inputs, from `weights`.
inline float RunOnce(Net* net, const NetParameter& weights) {
  net->CopyTrainedLayersFrom(weights);
  Blob& data = *net->input_blobs()[0];
  StoreValues(&data, RoundedGaussian(data.count(), 5, BFLOAT16), false);
  FillValues(net->input_blobs()[1], {0, 1, 2, 1});
  net->ClearParamDiffs();
  const float loss = net->Forward();
  net->Backward();
  return loss;
}

/// One forward and backward of `got` against `want` (the same net built
/// another way) from `want`'s weights: the loss within `loss_tolerance` of
/// want's (relative), and every learned gradient within
/// `gradient_tolerance` of want's in L2 norm (relative; a gradient of zeros,
/// BatchNorm's statistics, must stay zeros).
inline void ExpectNetsRunNear(Net* want, Net* got, float loss_tolerance,
                              double gradient_tolerance) {
  NetParameter weights;
  want->ToProto(&weights);
  const float loss_want = RunOnce(want, weights);
  EXPECT_NEAR(RunOnce(got, weights), loss_want, loss_tolerance * loss_want);
  for (size_t p = 0; p < want->learnable_params().size(); ++p) {
    const std::vector<float> expected = DiffOf(*want->learnable_params()[p]);
    const std::vector<float> actual = DiffOf(*got->learnable_params()[p]);
    double error = 0, norm = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      error += (actual[i] - expected[i]) * (actual[i] - expected[i]);
      norm += static_cast<double>(expected[i]) * expected[i];
    }
    EXPECT_LE(std::sqrt(error), gradient_tolerance * std::sqrt(norm))
        << want->param_display_names()[p] << ": " << std::sqrt(error / norm) << " relative";
  }
}

/// ExpectNetsRunNear within the CPU tests' bounds for 16 bits against FLOAT
/// (test_bf16_storage.cpp, test_f16_storage.cpp): BFLOAT16 1 % of the loss
/// and 10 % of each gradient, FLOAT16 0.2 % and 5 %.
inline void ExpectNetsRunNearInType(Type type, Net* want, Net* got) {
  if (type == BFLOAT16) {
    ExpectNetsRunNear(want, got, 0.01f, 0.1);
  } else {
    ExpectNetsRunNear(want, got, 0.002f, 0.05);
  }
}

/// The block net in `type` against FLOAT from the same weights
/// (ExpectNetsRunNear).
inline void ExpectBlockNetNearFloat(Type type, float loss_tolerance, double gradient_tolerance,
                                    Device device = Device::kCPU) {
  auto narrow = BlockNet(type, ARENA, device);
  auto wide = BlockNet(FLOAT, ARENA, device);
  ExpectNetsRunNear(wide.get(), narrow.get(), loss_tolerance, gradient_tolerance);
}

/// Two steps of `planned` and `unplanned` (the same net, ARENA and NONE)
/// from the same weights: the same losses and gradients, bit for bit (the
/// second step reads what the first left in the arena).
inline void ExpectPlannedMatchesUnplanned(Net* planned, Net* unplanned) {
  NetParameter weights;
  planned->ToProto(&weights);
  for (int step = 0; step < 2; ++step) {
    EXPECT_EQ(RunOnce(planned, weights), RunOnce(unplanned, weights));
    for (size_t p = 0; p < planned->learnable_params().size(); ++p) {
      EXPECT_EQ(DiffOf(*planned->learnable_params()[p]), DiffOf(*unplanned->learnable_params()[p]))
          << planned->param_display_names()[p];
    }
  }
}

/// SGD on the block net fed by DummyData, at `precision` with GradScaler's
/// dynamic loss scaling, as the solver text of `max_iter` iterations.
inline std::string SixteenBitSolver(Type precision, const std::string& prefix, int max_iter,
                                    const std::string& extra = "") {
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
    lr_policy: "fixed" random_seed: 3 precision: )",
                Type_Name(precision), " snapshot_prefix: \"", prefix, "\" max_iter: ", max_iter,
                " ", extra);
}

/// Six iterations of SixteenBitSolver(precision) straight, and three, a
/// snapshot, then three more resumed from it: the same params, history and
/// loss scale, bit for bit. `make` builds a solver from its text.
inline void ExpectSixteenBitResumeIsBitIdentical(Type precision, const SolverMaker& make) {
  ScratchDir dir;
  const ResumeRuns runs = RunStraightAndResumed(
      dir,
      [precision](const std::string& prefix, int max_iter, const std::string& extra) {
        return SixteenBitSolver(precision, prefix, max_iter, extra);
      },
      6, make);
  EXPECT_EQ(runs.second_half->loss_scaler().scale(), runs.straight->loss_scaler().scale());
}

}  // namespace
}  // namespace demi

#endif  // DEMI_TESTS_STORAGE_COMPARE_UTIL_HPP_
