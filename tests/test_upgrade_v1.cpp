// .caffemodel files as BVLC Caffe writes them: the legacy V1 `layers` field
// with 4-D blob dims, and the current `layer` field with BlobShape. The bytes
// are assembled by hand from Caffe's field numbers, not by our schema, so a
// wrong number in demi.proto fails here.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "demi/net.hpp"
#include "demi/util/io.hpp"
#include "demi/util/upgrade_v1.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

// ---- a minimal protobuf wire-format writer ----

std::string Varint(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    if (value) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (value);
  return out;
}

std::string VarintField(int field, uint64_t value) {
  return Varint(field << 3 | 0) + Varint(value);
}

std::string Fixed32Field(int field, float value) {
  char bytes[4];
  std::memcpy(bytes, &value, 4);  // little-endian on every machine we build for
  return Varint(field << 3 | 5) + std::string(bytes, 4);
}

std::string BytesField(int field, const std::string& bytes) {
  return Varint(field << 3 | 2) + Varint(bytes.size()) + bytes;
}

std::string PackedFloats(int field, const std::vector<float>& values) {
  std::string raw(values.size() * 4, '\0');
  std::memcpy(raw.data(), values.data(), raw.size());
  return BytesField(field, raw);
}

std::string PackedVarints(int field, const std::vector<int64_t>& values) {
  std::string raw;
  for (int64_t value : values) raw += Varint(static_cast<uint64_t>(value));
  return BytesField(field, raw);
}

/// BlobProto with legacy dims: num 1, channels 2, height 3, width 4, data 5.
std::string LegacyBlob(int num, int channels, int height, int width,
                       const std::vector<float>& data) {
  return VarintField(1, num) + VarintField(2, channels) + VarintField(3, height) +
         VarintField(4, width) + PackedFloats(5, data);
}

/// BlobProto with shape 7 (BlobShape: dim 1, packed) and data 5.
std::string ShapedBlob(const std::vector<int64_t>& dims, const std::vector<float>& data) {
  return BytesField(7, PackedVarints(1, dims)) + PackedFloats(5, data);
}

const std::vector<float> kWeights = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f};  // 3 x 2
const std::vector<float> kBias = {0.1f, 0.2f, 0.3f};

// V1LayerParameter: bottom 2, top 3, name 4, type 5 (INNER_PRODUCT = 14,
// RELU = 18), blobs 6, blobs_lr 7, weight_decay 8, inner_product_param 17
// (num_output 1). NetParameter: name 1, layers 2.
std::string V1Caffemodel() {
  const std::string ip = BytesField(2, "x") + BytesField(3, "y") + BytesField(4, "ip") +
                         VarintField(5, 14) + BytesField(6, LegacyBlob(1, 1, 3, 2, kWeights)) +
                         BytesField(6, LegacyBlob(1, 1, 1, 3, kBias)) + Fixed32Field(7, 1) +
                         Fixed32Field(7, 2) + Fixed32Field(8, 1) + Fixed32Field(8, 0) +
                         BytesField(17, VarintField(1, 3));
  const std::string relu =
      BytesField(2, "y") + BytesField(3, "y") + BytesField(4, "relu") + VarintField(5, 18);
  return BytesField(1, "legacy") + BytesField(2, ip) + BytesField(2, relu);
}

// LayerParameter: name 1, type 2, bottom 3, top 4, blobs 7. NetParameter:
// layer 100.
std::string CurrentCaffemodel() {
  const std::string ip = BytesField(1, "ip") + BytesField(2, "InnerProduct") + BytesField(3, "x") +
                         BytesField(4, "y") + BytesField(7, ShapedBlob({3, 2}, kWeights)) +
                         BytesField(7, ShapedBlob({3}, kBias));
  return BytesField(1, "current") + BytesField(100, ip);
}

const char* kTarget = R"(
  layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
  layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
          inner_product_param { num_output: 3 } }
  layer { name: "relu" type: "ReLU" bottom: "y" top: "y" }
)";

void ExpectCaffeWeights(const Net& net) {
  EXPECT_EQ(DataOf(*net.layer_by_name("ip")->blobs()[0]), kWeights);
  EXPECT_EQ(DataOf(*net.layer_by_name("ip")->blobs()[1]), kBias);
}

TEST(UpgradeV1Test, LoadsAV1Caffemodel) {
  ScratchDir dir;
  WriteFileAtomically(dir.file("v1.caffemodel"), V1Caffemodel());
  NetParameter stored;
  ReadProtoFromBinaryFile(dir.file("v1.caffemodel"), &stored);
  ASSERT_TRUE(NetNeedsV1Upgrade(stored));
  NetParameter upgraded;
  UpgradeV1Net(stored, &upgraded);
  EXPECT_FALSE(NetNeedsV1Upgrade(upgraded));
  EXPECT_EQ(upgraded.name(), "legacy");
  ASSERT_EQ(upgraded.layer_size(), 2);
  const LayerParameter& ip = upgraded.layer(0);
  EXPECT_EQ(ip.name(), "ip");
  EXPECT_EQ(ip.type(), "InnerProduct");
  EXPECT_EQ(ip.bottom(0), "x");
  EXPECT_EQ(ip.top(0), "y");
  EXPECT_EQ(ip.inner_product_param().num_output(), 3u);
  ASSERT_EQ(ip.param_size(), 2);
  EXPECT_EQ(ip.param(0).lr_mult(), 1.0f);
  EXPECT_EQ(ip.param(1).lr_mult(), 2.0f);
  EXPECT_EQ(ip.param(0).decay_mult(), 1.0f);
  EXPECT_EQ(ip.param(1).decay_mult(), 0.0f);
  EXPECT_EQ(upgraded.layer(1).type(), "ReLU");

  Net net(ParseText<NetParameter>(kTarget));
  net.CopyTrainedLayersFrom(upgraded);  // 4-D legacy dims against 2-D and 1-D params
  ExpectCaffeWeights(net);
}

TEST(UpgradeV1Test, LoadsACurrentCaffemodelWithBlobShapes) {
  ScratchDir dir;
  WriteFileAtomically(dir.file("current.caffemodel"), CurrentCaffemodel());
  Net net(ParseText<NetParameter>(kTarget));
  net.CopyTrainedLayersFrom(dir.file("current.caffemodel"));
  ExpectCaffeWeights(net);
}

TEST(UpgradeV1Test, SolverFineTunesFromEitherFormat) {
  ScratchDir dir;
  WriteFileAtomically(dir.file("v1.caffemodel"), V1Caffemodel());
  WriteFileAtomically(dir.file("current.caffemodel"), CurrentCaffemodel());
  for (const char* file : {"v1.caffemodel", "current.caffemodel"}) {
    auto solver = MakeSolver(StrCat("net_param {", kTarget, R"(} lr_policy: "fixed")"));
    solver->CopyWeights(dir.file(file));
    ExpectCaffeWeights(solver->net());
  }
}

TEST(UpgradeV1Test, ConvertsEveryFieldV1Carries) {
  const NetParameter v1 = ParseText<NetParameter>(R"(
    name: "v1" force_backward: true
    layers { name: "conv" type: CONVOLUTION bottom: "data" top: "conv"
             param: "shared_w" param: "shared_b" blob_share_mode: PERMISSIVE
             blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0
             convolution_param { num_output: 8 kernel_size: 3 }
             include { phase: TRAIN } }
    layers { name: "pool" type: POOLING bottom: "conv" top: "pool"
             pooling_param { pool: AVE kernel_size: 2 } exclude { stage: "deploy" } }
    layers { name: "data" type: DATA top: "data" transform_param { scale: 0.5 mirror: true } }
    layers { name: "loss" type: SOFTMAX_LOSS bottom: "pool" bottom: "label" top: "loss"
             loss_weight: 2 loss_param { ignore_label: 255 } }
    layers { name: "drop" type: DROPOUT dropout_param { dropout_ratio: 0.3 } }
  )");
  NetParameter net;
  UpgradeV1Net(v1, &net);
  EXPECT_EQ(net.name(), "v1");
  EXPECT_TRUE(net.force_backward());
  ASSERT_EQ(net.layer_size(), 5);
  const LayerParameter& conv = net.layer(0);
  EXPECT_EQ(conv.type(), "Convolution");
  ASSERT_EQ(conv.param_size(), 2);
  EXPECT_EQ(conv.param(0).name(), "shared_w");
  EXPECT_EQ(conv.param(1).name(), "shared_b");
  EXPECT_EQ(conv.param(0).share_mode(), ParamSpec::PERMISSIVE);
  EXPECT_EQ(conv.param(1).lr_mult(), 2.0f);
  EXPECT_EQ(conv.param(1).decay_mult(), 0.0f);
  EXPECT_EQ(conv.convolution_param().num_output(), 8u);
  EXPECT_EQ(conv.include(0).phase(), TRAIN);
  EXPECT_EQ(net.layer(1).type(), "Pooling");
  EXPECT_EQ(net.layer(1).pooling_param().pool(), PoolingParameter::AVE);
  EXPECT_EQ(net.layer(1).exclude(0).stage(0), "deploy");
  EXPECT_EQ(net.layer(2).type(), "Data");
  EXPECT_EQ(net.layer(2).transform_param().scale(), 0.5f);
  EXPECT_EQ(net.layer(3).type(), "SoftmaxWithLoss");
  EXPECT_EQ(net.layer(3).loss_weight(0), 2.0f);
  EXPECT_EQ(net.layer(3).loss_param().ignore_label(), 255);
  EXPECT_EQ(net.layer(4).type(), "Dropout");
  EXPECT_FLOAT_EQ(net.layer(4).dropout_param().dropout_ratio(), 0.3f);
}

TEST(UpgradeV1Test, TypeNames) {
  EXPECT_EQ(V1LayerTypeName(V1LayerParameter::INNER_PRODUCT), "InnerProduct");
  EXPECT_EQ(V1LayerTypeName(V1LayerParameter::SOFTMAX_LOSS), "SoftmaxWithLoss");
  EXPECT_EQ(V1LayerTypeName(V1LayerParameter::TANH), "TanH");
  EXPECT_EQ(V1LayerTypeName(V1LayerParameter::HDF5_DATA), "HDF5Data");
  EXPECT_EQ(V1LayerTypeName(V1LayerParameter::IM2COL), "Im2col");
}

TEST(UpgradeV1Test, Errors) {
  NetParameter out;
  ExpectErrorContaining(
      [&] {
        UpgradeV1Net(ParseText<NetParameter>(R"(
          name: "mixed" layer { name: "a" type: "ReLU" } layers { name: "b" type: RELU })"),
                     &out);
      },
      {"net 'mixed'", "both 'layer' and legacy V1 'layers'"});
  ExpectErrorContaining(
      [&] {
        UpgradeV1Net(ParseText<NetParameter>(R"(layers { name: "old" layer { name: "old" } })"),
                     &out);
      },
      {"V1 layer 'old'", "V0"});
  ExpectErrorContaining(
      [&] { UpgradeV1Net(ParseText<NetParameter>(R"(layers { name: "untyped" })"), &out); },
      {"V1 layer 'untyped' has no type"});
}

}  // namespace
}  // namespace demi
