// Nets in Caffe's oldest (V0) format: `layers` entries that carry only
// bottoms and tops, with the layer itself nested as a V0LayerParameter, and
// padding as a layer of its own.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "demi/net.hpp"
#include "demi/util/upgrade_proto.hpp"
#include "demi/util/upgrade_v0.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

// A padding layer feeding the conv: after the upgrade the conv reads "data"
// with pad 1, so its 5x5 input stays 5x5. The inner product starts at zero,
// so the loss over 3 classes is ln 3 whatever the conv computes.
const char* kV0Net = R"(
  name: "v0net"
  input: "data" input_dim: 2 input_dim: 1 input_dim: 5 input_dim: 5
  input: "label" input_dim: 2 input_dim: 1 input_dim: 1 input_dim: 1
  layers { bottom: "data" top: "data_pad" layer { name: "pad1" type: "padding" pad: 1 } }
  layers {
    bottom: "data_pad" top: "conv1"
    layer {
      name: "conv1" type: "conv" num_output: 2 kernelsize: 3 stride: 1
      weight_filler { type: "gaussian" std: 0.1 } bias_filler { type: "constant" value: 0.2 }
      blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0
    }
  }
  layers { bottom: "conv1" top: "conv1" layer { name: "relu1" type: "relu" } }
  layers {
    bottom: "conv1" top: "pool1"
    layer { name: "pool1" type: "pool" pool: AVE kernelsize: 2 stride: 2 }
  }
  layers {
    bottom: "pool1" top: "ip1"
    layer {
      name: "ip1" type: "innerproduct" num_output: 3 biasterm: true
      weight_filler { type: "constant" value: 0 } bias_filler { type: "constant" value: 0 }
    }
  }
  layers { bottom: "ip1" bottom: "label" top: "loss" layer { name: "loss" type: "softmax_loss" } }
)";

TEST(UpgradeV0Test, UpgradesAndRunsAV0Net) {
  NetParameter param = ParseText<NetParameter>(kV0Net);
  ASSERT_TRUE(NetNeedsV0Upgrade(param));
  EXPECT_TRUE(UpgradeNetAsNeeded("v0 test net", &param));
  EXPECT_FALSE(NetNeedsV0Upgrade(param));
  EXPECT_EQ(param.layers_size(), 0);
  EXPECT_EQ(param.name(), "v0net");
  // Input, conv1, relu1, pool1, ip1, loss: the padding layer is gone.
  ASSERT_EQ(param.layer_size(), 6);
  EXPECT_EQ(param.layer(0).type(), "Input");

  const LayerParameter& conv = param.layer(1);
  EXPECT_EQ(conv.name(), "conv1");
  EXPECT_EQ(conv.type(), "Convolution");
  ASSERT_EQ(conv.bottom_size(), 1);
  EXPECT_EQ(conv.bottom(0), "data");
  EXPECT_EQ(conv.top(0), "conv1");
  const ConvolutionParameter& cp = conv.convolution_param();
  EXPECT_EQ(cp.num_output(), 2u);
  ASSERT_EQ(cp.pad_size(), 1);
  EXPECT_EQ(cp.pad(0), 1u);
  ASSERT_EQ(cp.kernel_size_size(), 1);
  EXPECT_EQ(cp.kernel_size(0), 3u);
  ASSERT_EQ(cp.stride_size(), 1);
  EXPECT_EQ(cp.stride(0), 1u);
  EXPECT_EQ(cp.weight_filler().type(), "gaussian");
  EXPECT_FLOAT_EQ(cp.weight_filler().std(), 0.1f);
  EXPECT_FLOAT_EQ(cp.bias_filler().value(), 0.2f);
  ASSERT_EQ(conv.param_size(), 2);
  EXPECT_EQ(conv.param(0).lr_mult(), 1.0f);
  EXPECT_EQ(conv.param(1).lr_mult(), 2.0f);
  EXPECT_EQ(conv.param(0).decay_mult(), 1.0f);
  EXPECT_EQ(conv.param(1).decay_mult(), 0.0f);

  EXPECT_EQ(param.layer(2).type(), "ReLU");
  const LayerParameter& pool = param.layer(3);
  EXPECT_EQ(pool.type(), "Pooling");
  EXPECT_EQ(pool.pooling_param().pool(), PoolingParameter::AVE);
  EXPECT_EQ(pool.pooling_param().kernel_size(), 2u);
  EXPECT_EQ(pool.pooling_param().stride(), 2u);
  EXPECT_FALSE(pool.pooling_param().has_pad());
  const LayerParameter& ip = param.layer(4);
  EXPECT_EQ(ip.type(), "InnerProduct");
  EXPECT_EQ(ip.inner_product_param().num_output(), 3u);
  EXPECT_TRUE(ip.inner_product_param().bias_term());
  EXPECT_FALSE(ip.has_convolution_param());
  EXPECT_EQ(param.layer(5).type(), "SoftmaxWithLoss");
  EXPECT_EQ(param.layer(5).bottom(1), "label");

  param.mutable_state()->set_phase(TRAIN);
  Net net(param);
  EXPECT_EQ(net.blob_by_name("conv1")->shape(), (std::vector<int64_t>{2, 2, 5, 5}));
  EXPECT_EQ(net.blob_by_name("pool1")->shape(), (std::vector<int64_t>{2, 2, 3, 3}));
  FillGaussian(net.blob_by_name("data").get(), 7);
  FillValues(net.blob_by_name("label").get(), {0, 2});
  EXPECT_NEAR(net.Forward(), std::log(3.0f), 1e-5);
}

TEST(UpgradeV0Test, PaddingFoldsIntoPoolAndCurrentNetsAreLeftAlone) {
  NetParameter param = ParseText<NetParameter>(R"(
    input: "x" input_dim: 1 input_dim: 1 input_dim: 4 input_dim: 4
    layers { bottom: "x" top: "xp" layer { name: "p" type: "padding" pad: 2 } }
    layers { bottom: "xp" top: "y" layer { name: "pool" type: "pool" kernelsize: 3 } })");
  NetParameter out;
  UpgradeV0Net(param, &out);
  ASSERT_EQ(out.layers_size(), 1);
  EXPECT_EQ(out.layers(0).type(), V1LayerParameter::POOLING);
  EXPECT_EQ(out.layers(0).bottom(0), "x");
  EXPECT_EQ(out.layers(0).pooling_param().pad(), 2u);
  EXPECT_EQ(out.layers(0).pooling_param().pool(), PoolingParameter::MAX);
  EXPECT_FALSE(out.layers(0).has_layer());

  EXPECT_FALSE(NetNeedsV0Upgrade(ParseText<NetParameter>(
      R"(layer { name: "r" type: "ReLU" } layers { name: "s" type: SIGMOID })")));
}

TEST(UpgradeV0Test, ConvertsDataAndOtherFields) {
  NetParameter param = ParseText<NetParameter>(R"(
    layers {
      top: "data" top: "label"
      layer {
        name: "data" type: "data" source: "train_db" batchsize: 16 rand_skip: 5
        scale: 0.5 meanfile: "mean.binaryproto" cropsize: 7 mirror: true
      }
    }
    layers {
      top: "img" top: "ilabel"
      layer {
        name: "img" type: "images" source: "list.txt" batchsize: 4 shuffle_images: true
        new_height: 32 new_width: 40 cropsize: 28
      }
    }
    layers { bottom: "data" top: "norm" layer { name: "norm" type: "lrn" local_size: 3 alpha: 0.1 beta: 0.5 k: 2 } }
    layers { bottom: "norm" top: "norm" layer { name: "drop" type: "dropout" dropout_ratio: 0.3 } }
    layers { bottom: "norm" bottom: "norm" top: "cat" layer { name: "cat" type: "concat" concat_dim: 0 } }
    layers {
      bottom: "cat" top: "conv"
      layer { name: "conv" type: "conv" num_output: 4 kernelsize: 1 group: 2 biasterm: false }
    }
    layers { bottom: "conv" bottom: "label" layer { name: "ig" type: "infogain_loss" source: "H" } }
    layers { bottom: "conv" layer { name: "out" type: "hdf5_output" hdf5_output_param { file_name: "o.h5" } } }
    layers { bottom: "conv" top: "flat" layer { name: "flat" type: "flatten" } })");
  ASSERT_TRUE(UpgradeNetAsNeeded("fields", &param));
  ASSERT_EQ(param.layer_size(), 9);

  const LayerParameter& data = param.layer(0);
  EXPECT_EQ(data.type(), "Data");
  EXPECT_EQ(data.data_param().source(), "train_db");
  EXPECT_EQ(data.data_param().batch_size(), 16u);
  EXPECT_EQ(data.data_param().rand_skip(), 5u);
  EXPECT_FALSE(data.data_param().has_scale());
  EXPECT_FLOAT_EQ(data.transform_param().scale(), 0.5f);
  EXPECT_EQ(data.transform_param().mean_file(), "mean.binaryproto");
  EXPECT_EQ(data.transform_param().crop_size(), 7u);
  EXPECT_TRUE(data.transform_param().mirror());

  const LayerParameter& img = param.layer(1);
  EXPECT_EQ(img.type(), "ImageData");
  EXPECT_EQ(img.image_data_param().source(), "list.txt");
  EXPECT_EQ(img.image_data_param().batch_size(), 4u);
  EXPECT_TRUE(img.image_data_param().shuffle());
  EXPECT_EQ(img.image_data_param().new_height(), 32u);
  EXPECT_EQ(img.image_data_param().new_width(), 40u);
  EXPECT_EQ(img.transform_param().crop_size(), 28u);

  const LayerParameter& lrn = param.layer(2);
  EXPECT_EQ(lrn.type(), "LRN");
  EXPECT_EQ(lrn.lrn_param().local_size(), 3u);
  EXPECT_FLOAT_EQ(lrn.lrn_param().alpha(), 0.1f);
  EXPECT_FLOAT_EQ(lrn.lrn_param().beta(), 0.5f);
  EXPECT_FLOAT_EQ(lrn.lrn_param().k(), 2.0f);
  EXPECT_EQ(param.layer(3).type(), "Dropout");
  EXPECT_FLOAT_EQ(param.layer(3).dropout_param().dropout_ratio(), 0.3f);
  EXPECT_EQ(param.layer(4).type(), "Concat");
  EXPECT_TRUE(param.layer(4).concat_param().has_concat_dim());
  EXPECT_EQ(param.layer(4).concat_param().concat_dim(), 0u);
  const LayerParameter& conv = param.layer(5);
  EXPECT_EQ(conv.convolution_param().group(), 2u);
  EXPECT_FALSE(conv.convolution_param().bias_term());
  EXPECT_EQ(conv.convolution_param().pad_size(), 0);
  EXPECT_EQ(param.layer(6).type(), "InfogainLoss");
  EXPECT_EQ(param.layer(6).infogain_loss_param().source(), "H");
  EXPECT_EQ(param.layer(7).type(), "HDF5Output");
  EXPECT_EQ(param.layer(7).hdf5_output_param().file_name(), "o.h5");
  EXPECT_EQ(param.layer(8).type(), "Flatten");
}

TEST(UpgradeV0Test, Errors) {
  NetParameter out;
  const auto upgrade = [&](const std::string& text) {
    NetParameter param = ParseText<NetParameter>(text);
    UpgradeNetAsNeeded("errors", &param);
  };
  ExpectErrorContaining(
      [&] { upgrade(R"(layers { top: "y" layer { name: "odd" type: "warp" } })"); },
      {"V0 layer 'odd'", "unknown type 'warp'"});
  ExpectErrorContaining(
      [&] {
        upgrade(R"(
          layers { bottom: "x" top: "xp" layer { name: "pad" type: "padding" pad: 1 } }
          layers { bottom: "xp" top: "y" layer { name: "r" type: "relu" } })");
      },
      {"V0 padding layer 'pad'", "feeds layer 'r'", "not a conv or pool"});
  ExpectErrorContaining(
      [&] {
        upgrade(R"(
          layers { bottom: "x" bottom: "z" top: "xp" layer { name: "pad2" type: "padding" } })");
      },
      {"V0 padding layer 'pad2'", "one bottom and one top"});
  ExpectErrorContaining(
      [&] {
        upgrade(R"(
          layers { bottom: "x" top: "xp" layer { name: "pad3" type: "padding" pad: 1 } }
          layers { bottom: "xp" bottom: "w" top: "y" layer { name: "c" type: "conv" } })");
      },
      {"V0 layer 'c'", "padding layer 'pad3'", "2 bottoms"});
  ExpectErrorContaining(
      [&] {
        upgrade(
            R"(layers { bottom: "x" top: "y" layer { name: "r" type: "relu" num_output: 3 } })");
      },
      {"V0 layer 'r'", "type 'relu'", "sets num_output"});
  ExpectErrorContaining(
      [&] {
        UpgradeV0Net(ParseText<NetParameter>(R"(
          layers { top: "y" layer { name: "d" type: "data" new_num: 2 } })"),
                     &out);
      },
      {"V0 layer 'd'", "sets new_num"});
}

}  // namespace
}  // namespace demi
