// The schema must read what Caffe writes: prototxts in Caffe's syntax and
// binary protos laid out with Caffe's field numbers.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "demi/proto/demi.pb.h"
#include "test_util.hpp"

namespace demi {
namespace {

// Caffe's examples/mnist/lenet_train_test.prototxt, as users have it.
const char* kCaffeLeNetTrainTest = R"(
name: "LeNet"
layer {
  name: "mnist"
  type: "Data"
  top: "data"
  top: "label"
  include {
    phase: TRAIN
  }
  transform_param {
    scale: 0.00390625
  }
  data_param {
    source: "examples/mnist/mnist_train_lmdb"
    batch_size: 64
    backend: LMDB
  }
}
layer {
  name: "mnist"
  type: "Data"
  top: "data"
  top: "label"
  include {
    phase: TEST
  }
  transform_param {
    scale: 0.00390625
  }
  data_param {
    source: "examples/mnist/mnist_test_lmdb"
    batch_size: 100
    backend: LMDB
  }
}
layer {
  name: "conv1"
  type: "Convolution"
  bottom: "data"
  top: "conv1"
  param {
    lr_mult: 1
  }
  param {
    lr_mult: 2
  }
  convolution_param {
    num_output: 20
    kernel_size: 5
    stride: 1
    weight_filler {
      type: "xavier"
    }
    bias_filler {
      type: "constant"
    }
  }
}
layer {
  name: "pool1"
  type: "Pooling"
  bottom: "conv1"
  top: "pool1"
  pooling_param {
    pool: MAX
    kernel_size: 2
    stride: 2
  }
}
layer {
  name: "ip1"
  type: "InnerProduct"
  bottom: "pool1"
  top: "ip1"
  inner_product_param {
    num_output: 500
    weight_filler {
      type: "xavier"
    }
  }
}
layer {
  name: "relu1"
  type: "ReLU"
  bottom: "ip1"
  top: "ip1"
}
layer {
  name: "accuracy"
  type: "Accuracy"
  bottom: "ip1"
  bottom: "label"
  top: "accuracy"
  include {
    phase: TEST
  }
}
layer {
  name: "loss"
  type: "SoftmaxWithLoss"
  bottom: "ip1"
  bottom: "label"
  top: "loss"
}
)";

// Caffe's examples/mnist/lenet_solver.prototxt.
const char* kCaffeLeNetSolver = R"(
# The train/test net protocol buffer definition
net: "examples/mnist/lenet_train_test.prototxt"
test_iter: 100
test_interval: 500
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: "inv"
gamma: 0.0001
power: 0.75
display: 100
max_iter: 10000
snapshot: 5000
snapshot_prefix: "examples/mnist/lenet"
solver_mode: GPU
)";

TEST(ProtoTest, CaffeLeNetTrainTestParses) {
  NetParameter net = ParseText<NetParameter>(kCaffeLeNetTrainTest);
  ASSERT_EQ(net.layer_size(), 8);
  EXPECT_EQ(net.layer(0).data_param().backend(), DataParameter::LMDB);
  EXPECT_FLOAT_EQ(net.layer(0).transform_param().scale(), 0.00390625f);
  EXPECT_EQ(net.layer(1).include(0).phase(), TEST);
  EXPECT_EQ(net.layer(2).param(1).lr_mult(), 2);
  EXPECT_EQ(net.layer(2).convolution_param().kernel_size(0), 5u);
  EXPECT_EQ(net.layer(3).pooling_param().pool(), PoolingParameter::MAX);
}

TEST(ProtoTest, CaffeLeNetSolverParses) {
  SolverParameter solver = ParseText<SolverParameter>(kCaffeLeNetSolver);
  EXPECT_EQ(solver.net(), "examples/mnist/lenet_train_test.prototxt");
  EXPECT_EQ(solver.test_iter(0), 100);
  EXPECT_EQ(solver.lr_policy(), "inv");
  EXPECT_FLOAT_EQ(solver.power(), 0.75f);
  EXPECT_EQ(solver.solver_mode(), SolverParameter::GPU);
  EXPECT_EQ(solver.type(), "SGD");  // default
}

TEST(ProtoTest, LegacyV1NetParses) {
  NetParameter net = ParseText<NetParameter>(R"(
    name: "old"
    input: "data" input_dim: 1 input_dim: 3 input_dim: 8 input_dim: 8
    layers { name: "conv" type: CONVOLUTION bottom: "data" top: "conv" blobs_lr: 1 blobs_lr: 2
             weight_decay: 1 weight_decay: 0 convolution_param { num_output: 4 kernel_size: 3 } }
  )");
  ASSERT_EQ(net.layers_size(), 1);
  EXPECT_EQ(net.layers(0).type(), V1LayerParameter::CONVOLUTION);
  EXPECT_EQ(net.layers(0).blobs_lr(1), 2);
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// Bytes laid out by hand with Caffe's field numbers: if any number differed
// from caffe.proto, these would parse into the wrong fields.
TEST(ProtoTest, BinaryBlobProtoWithCaffesFieldNumbers) {
  std::string wire = Bytes({0x3A, 0x04, 0x0A, 0x02, 0x02, 0x01,  // shape (7) { dim (1): [2, 1] }
                            0x2A, 0x08,                          // data (5), packed, 8 bytes
                            0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0x40});  // 1.0f 2.0f
  BlobProto proto;
  ASSERT_TRUE(proto.ParseFromString(wire));
  Blob blob;
  blob.FromProto(proto);
  EXPECT_EQ(blob.shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(DataOf(blob), (std::vector<float>{1, 2}));

  // Legacy dims: num (1), channels (2), height (3), width (4); data unpacked
  // floats (field 5, wire type 5) as very old Caffe wrote them.
  std::string legacy = Bytes(
      {0x08, 0x01, 0x10, 0x01, 0x18, 0x01, 0x20, 0x01, 0x2D, 0x00, 0x00, 0x40, 0x40});  // 3.0f
  ASSERT_TRUE(proto.ParseFromString(legacy));
  blob.FromProto(proto);
  EXPECT_EQ(blob.shape(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(blob.cpu_data()[0], 3.0f);
}

TEST(ProtoTest, BinaryNetWithCaffesFieldNumbers) {
  // layer (100) { name (1): "ip" type (2): "IP" inner_product_param (117) { num_output (1): 10 } }
  std::string layer =
      Bytes({0x0A, 0x02, 'i', 'p', 0x12, 0x02, 'I', 'P', 0xAA, 0x07, 0x02, 0x08, 0x0A});
  std::string wire = Bytes({0xA2, 0x06, static_cast<int>(layer.size())}) + layer;
  // layers (2) { type (5): CONVOLUTION (4) }: a V1 layer.
  wire += Bytes({0x12, 0x02, 0x28, 0x04});
  NetParameter net;
  ASSERT_TRUE(net.ParseFromString(wire));
  ASSERT_EQ(net.layer_size(), 1);
  EXPECT_EQ(net.layer(0).name(), "ip");
  EXPECT_EQ(net.layer(0).inner_product_param().num_output(), 10u);
  ASSERT_EQ(net.layers_size(), 1);
  EXPECT_EQ(net.layers(0).type(), V1LayerParameter::CONVOLUTION);
}

TEST(ProtoTest, BinarySolverFieldsWithCaffesNumbers) {
  // base_lr (5, fixed32) 0.5f; max_iter (7) 100; type (40) "Adam".
  std::string wire =
      Bytes({0x2D, 0x00, 0x00, 0x00, 0x3F, 0x38, 0x64, 0xC2, 0x02, 0x04, 'A', 'd', 'a', 'm'});
  SolverParameter solver;
  ASSERT_TRUE(solver.ParseFromString(wire));
  EXPECT_FLOAT_EQ(solver.base_lr(), 0.5f);
  EXPECT_EQ(solver.max_iter(), 100);
  EXPECT_EQ(solver.type(), "Adam");
}

TEST(ProtoTest, NetParameterBinaryRoundTrip) {
  NetParameter net = ParseText<NetParameter>(kCaffeLeNetTrainTest);
  BlobProto* blob = net.mutable_layer(2)->add_blobs();
  blob->mutable_shape()->add_dim(2);
  blob->add_data(0.25f);
  blob->add_data(-4.0f);
  std::string bytes;
  ASSERT_TRUE(net.SerializeToString(&bytes));
  NetParameter back;
  ASSERT_TRUE(back.ParseFromString(bytes));
  EXPECT_EQ(back.SerializeAsString(), bytes);
  EXPECT_EQ(back.layer(2).blobs(0).data(1), -4.0f);
}

TEST(ProtoTest, DemitasseAdditionsUseHighNumbers) {
  const auto* field = NetParameter::descriptor()->FindFieldByName("memory_optimization");
  ASSERT_NE(field, nullptr);
  EXPECT_GE(field->number(), 5000);
  EXPECT_GE(NetParameter::descriptor()->FindFieldByName("keep_blob")->number(), 5000);
  EXPECT_GE(DataParameter::descriptor()->FindFieldByName("skip_bad_records")->number(), 5000);
}

}  // namespace
}  // namespace demi
