#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "demi/net.hpp"
#include "demi/util/insert_splits.hpp"
#include "demi/util/upgrade_proto.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

std::unique_ptr<Net> MakeNet(const std::string& text, Phase phase = TRAIN,
                             const std::vector<std::string>& stages = {}, int level = 0) {
  NetParameter param = ParseText<NetParameter>(text);
  param.mutable_state()->set_phase(phase);
  param.mutable_state()->set_level(level);
  for (const auto& stage : stages) param.mutable_state()->add_stage(stage);
  return std::make_unique<Net>(param);
}

const char* kTwoHeads = R"(
  name: "two_heads"
  force_backward: true
  layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
  layer { name: "a" type: "InnerProduct" bottom: "x" top: "a" loss_weight: 1
          inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
  layer { name: "b" type: "InnerProduct" bottom: "x" top: "b" loss_weight: 2
          inner_product_param { num_output: 4 weight_filler { type: "gaussian" } } }
)";

TEST(NetTest, InsertsSplitForBlobWithTwoReaders) {
  auto net = MakeNet(kTwoHeads);
  ASSERT_EQ(net->layers().size(), 4u);
  EXPECT_EQ(net->layer_names()[1], "x_in_0_split");
  EXPECT_STREQ(net->layers()[1]->type(), "Split");
  EXPECT_TRUE(net->has_blob("x_in_0_split_0"));
  EXPECT_TRUE(net->has_blob("x_in_0_split_1"));
  // Readers get the split outputs in order.
  EXPECT_EQ(net->layers()[2]->layer_param().bottom(0), "x_in_0_split_0");
  EXPECT_EQ(net->layers()[3]->layer_param().bottom(0), "x_in_0_split_1");
}

TEST(NetTest, SplitSumsGradientsAndLossWeightsScale) {
  auto net = MakeNet(kTwoHeads);
  Blob* x = net->input_blobs()[0];
  FillValues(x, {1, -2, 0.5, 3, 0, -1});
  const float loss = net->ForwardBackward();
  const Blob& wa = *net->layer_by_name("a")->blobs()[0];
  const Blob& wb = *net->layer_by_name("b")->blobs()[0];
  // loss = 1 * sum(a) + 2 * sum(b); d loss / d x[k] = sum_n Wa[n,k] + 2 sum_n Wb[n,k].
  double expected_loss = 0;
  for (int k = 0; k < 3; ++k) {
    double col_a = 0, col_b = 0;
    for (int n = 0; n < 2; ++n) col_a += wa.cpu_data()[n * 3 + k];
    for (int n = 0; n < 4; ++n) col_b += wb.cpu_data()[n * 3 + k];
    for (int row = 0; row < 2; ++row) {
      EXPECT_NEAR(x->cpu_diff()[row * 3 + k], col_a + 2 * col_b, 1e-5);
      expected_loss += x->cpu_data()[row * 3 + k] * (col_a + 2 * col_b);
    }
  }
  // Biases are zero (default constant filler).
  EXPECT_NEAR(loss, expected_loss, 1e-4);
}

TEST(NetTest, SplitCarriesLossOfAConsumedTop) {
  auto net = MakeNet(R"(
    force_backward: true
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" loss_weight: 3
            inner_product_param { num_output: 2 weight_filler { type: "constant" value: 1 } } }
    layer { name: "ip2" type: "InnerProduct" bottom: "y" top: "z" loss_weight: 1
            inner_product_param { num_output: 1 weight_filler { type: "constant" value: 1 } } }
  )");
  FillValues(net->input_blobs()[0], {1, 2});
  // y = [3, 3], z = 6: loss = 3 * 6 + 6 = 24.
  EXPECT_FLOAT_EQ(net->ForwardBackward(), 24.0f);
  // dloss/dx = (3 + 1) * d(sum y)/dx = 4 * [2, 2].
  EXPECT_EQ(DiffOf(*net->input_blobs()[0]), (std::vector<float>{8, 8}));
}

TEST(NetTest, SharedParamsByName) {
  auto net = MakeNet(R"(
    layer { name: "in" type: "Input" top: "x" top: "y" input_param { shape { dim: 2 dim: 3 } } }
    layer { name: "a" type: "InnerProduct" bottom: "x" top: "a" param { name: "w" } param { name: "bias" }
            inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
    layer { name: "b" type: "InnerProduct" bottom: "y" top: "b" param { name: "w" } param { name: "bias" }
            inner_product_param { num_output: 2 } }
  )");
  EXPECT_EQ(net->learnable_params().size(), 2u);
  EXPECT_EQ(net->params().size(), 4u);
  EXPECT_EQ(net->param_owners()[2], 0);
  auto a = net->layer_by_name("a");
  auto b = net->layer_by_name("b");
  EXPECT_EQ(a->blobs()[0]->cpu_data(), b->blobs()[0]->cpu_data());
  EXPECT_EQ(a->blobs()[0]->cpu_diff(), b->blobs()[0]->cpu_diff());
}

TEST(NetTest, SharedParamShapeMismatchNamesBothLayers) {
  ExpectErrorContaining(
      [] {
        MakeNet(R"(
          layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
          layer { name: "a" type: "InnerProduct" bottom: "x" top: "a" param { name: "w" }
                  inner_product_param { num_output: 2 } }
          layer { name: "b" type: "InnerProduct" bottom: "a" top: "b" param { name: "w" }
                  inner_product_param { num_output: 2 } }
        )");
      },
      {"'w'", "layer 'b'", "2 2 (4)", "layer 'a'", "2 3 (6)"});
}

TEST(NetTest, SharedParamMultipliersMustAgreeWhereGiven) {
  // Caffe's rule: a sharer that gives lr_mult (decay_mult) gives the
  // others'; one that gives none takes theirs.
  const auto net_with = [](const std::string& a_spec, const std::string& b_spec) {
    return MakeNet(StrCat(R"(
      layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
      layer { name: "a" type: "InnerProduct" bottom: "x" top: "a" param { name: "w" )",
                          a_spec, R"( }
              inner_product_param { num_output: 3 bias_term: false } }
      layer { name: "b" type: "InnerProduct" bottom: "a" top: "b" param { name: "w" )",
                          b_spec, R"( }
              inner_product_param { num_output: 3 bias_term: false } })"));
  };
  ExpectErrorContaining(
      [&] { net_with("lr_mult: 1", "lr_mult: 0"); },
      {"shared param 'w' has mismatched lr_mult", "layer 'a' gives 1", "layer 'b' gives 0"});
  ExpectErrorContaining([&] { net_with("decay_mult: 2", "lr_mult: 1 decay_mult: 0"); },
                        {"mismatched decay_mult", "layer 'a' gives 2", "layer 'b' gives 0"});
  EXPECT_EQ(net_with("lr_mult: 3", "lr_mult: 3")->params_lr(), std::vector<float>{3});
  EXPECT_EQ(net_with("", "lr_mult: 0 decay_mult: 4")->params_lr(), std::vector<float>{0});
  EXPECT_EQ(net_with("lr_mult: 2", "")->params_weight_decay(), std::vector<float>{1});
}

TEST(NetTest, InPlaceLayersThatCannotRunInPlaceAreRefused) {
  const auto in_place = [](const std::string& layer) {
    MakeNet(StrCat(R"(
      layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }
      )",
                   layer));
  };
  // Their windows or columns read what the top overwrites.
  ExpectErrorContaining(
      [&] {
        in_place(R"(layer { name: "pool" type: "Pooling" bottom: "x" top: "x"
                            pooling_param { pool: AVE kernel_size: 1 } })");
      },
      {"Pooling layer 'pool' cannot run in place", "bottom 0 'x' (in place)"});
  ExpectErrorContaining(
      [&] {
        in_place(R"(layer { name: "cols" type: "Im2col" bottom: "x" top: "x"
                            convolution_param { kernel_size: 3 } })");
      },
      {"Im2col layer 'cols' cannot run in place"});
  // Any layer whose top takes another shape than its bottom's.
  ExpectErrorContaining(
      [&] { in_place(R"(layer { name: "top1" type: "ArgMax" bottom: "x" top: "x" })"); },
      {"ArgMax layer 'top1' cannot run in place: it changes its blob's shape from 2 3 4 4 (96) to "
       "2 1 1 1 (2)",
       "give its top a name of its own"});
  // An element-wise layer still runs in place.
  EXPECT_NO_THROW(in_place(R"(layer { name: "relu" type: "ReLU" bottom: "x" top: "x" })"));
}

const char* kStaged = R"(
  layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
  layer { name: "train_only" type: "ReLU" bottom: "x" top: "t" include { phase: TRAIN } }
  layer { name: "test_only" type: "ReLU" bottom: "x" top: "u" include { phase: TEST } }
  layer { name: "deploy" type: "ReLU" bottom: "x" top: "d" include { stage: "deploy" } }
  layer { name: "not_deploy" type: "ReLU" bottom: "x" top: "n" include { not_stage: "deploy" } }
  layer { name: "high" type: "ReLU" bottom: "x" top: "h" include { min_level: 2 } }
  layer { name: "excluded_in_test" type: "ReLU" bottom: "x" top: "e" exclude { phase: TEST } }
)";

TEST(NetTest, FiltersByPhaseStageAndLevel) {
  auto train = MakeNet(kStaged, TRAIN);
  EXPECT_TRUE(train->has_layer("train_only"));
  EXPECT_FALSE(train->has_layer("test_only"));
  EXPECT_FALSE(train->has_layer("deploy"));
  EXPECT_TRUE(train->has_layer("not_deploy"));
  EXPECT_FALSE(train->has_layer("high"));
  EXPECT_TRUE(train->has_layer("excluded_in_test"));
  auto test = MakeNet(kStaged, TEST, {"deploy"}, 3);
  EXPECT_FALSE(test->has_layer("train_only"));
  EXPECT_TRUE(test->has_layer("test_only"));
  EXPECT_TRUE(test->has_layer("deploy"));
  EXPECT_FALSE(test->has_layer("not_deploy"));
  EXPECT_TRUE(test->has_layer("high"));
  EXPECT_FALSE(test->has_layer("excluded_in_test"));
}

TEST(NetTest, InPlaceLayerReusesItsBottomBlob) {
  auto net = MakeNet(R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 3 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
            inner_product_param { num_output: 3 weight_filler { type: "gaussian" } } }
    layer { name: "relu" type: "ReLU" bottom: "y" top: "y" }
  )");
  EXPECT_EQ(net->blobs().size(), 2u);
  EXPECT_EQ(net->top_vecs()[2][0], net->bottom_vecs()[2][0]);
  FillValues(net->input_blobs()[0], {1, -1, 2});
  net->Forward();
  for (float v : DataOf(*net->blob_by_name("y"))) EXPECT_GE(v, 0.0f);
  ASSERT_EQ(net->output_blobs().size(), 1u);
  EXPECT_EQ(net->output_blobs()[0], net->blob_by_name("y").get());
}

TEST(NetTest, BackwardOnlyWhereNeeded) {
  auto net = MakeNet(R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 3 } } }
    layer { name: "frozen" type: "InnerProduct" bottom: "x" top: "f" param { lr_mult: 0 } param { lr_mult: 0 }
            inner_product_param { num_output: 3 } }
    layer { name: "learned" type: "InnerProduct" bottom: "f" top: "l" loss_weight: 1
            inner_product_param { num_output: 2 } }
    layer { name: "side" type: "InnerProduct" bottom: "x" top: "s" propagate_down: false
            inner_product_param { num_output: 2 } }
  )");
  const auto& need = net->layer_need_backward();
  EXPECT_FALSE(need[net->layer_index("frozen")]);  // no learnable params, nothing below learns
  EXPECT_TRUE(need[net->layer_index("learned")]);
  EXPECT_FALSE(need[net->layer_index("side")]);  // contributes to no loss
  EXPECT_FALSE(net->bottom_need_backward()[net->layer_index("learned")][0]);
}

TEST(NetTest, GradientsReachTheFirstLearnableLayerWithoutForceBackward) {
  auto net = MakeNet(R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
    layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
            inner_product_param { num_output: 4 weight_filler { type: "gaussian" } } }
    layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
    layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "y" loss_weight: 1
            inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
  )");
  FillValues(net->input_blobs()[0], {1, 2, 3, -1, 0.5, 2});
  net->ClearParamDiffs();
  net->ForwardBackward();
  EXPECT_TRUE(net->layer_need_backward()[net->layer_index("ip1")]);
  EXPECT_TRUE(net->layer_need_backward()[net->layer_index("relu")]);
  EXPECT_FALSE(net->bottom_need_backward()[net->layer_index("ip1")][0]);  // input needs none
  EXPECT_GT(net->layer_by_name("ip1")->blobs()[0]->asum_diff(), 0.0);
  EXPECT_GT(net->layer_by_name("ip1")->blobs()[1]->asum_diff(), 0.0);
}

TEST(NetTest, LegacyInputFieldsBecomeAnInputLayer) {
  auto net = MakeNet(R"(
    input: "data" input_dim: 2 input_dim: 3 input_dim: 4 input_dim: 5
    layer { name: "relu" type: "ReLU" bottom: "data" top: "out" }
  )");
  ASSERT_EQ(net->input_blobs().size(), 1u);
  EXPECT_EQ(net->input_blobs()[0]->shape(), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_STREQ(net->layers()[0]->type(), "Input");
}

TEST(NetTest, ToProtoOmitsSplitsAndWeightsRoundTrip) {
  auto net = MakeNet(kTwoHeads);
  NetParameter saved;
  net->ToProto(&saved);
  ASSERT_EQ(saved.layer_size(), 3);
  for (const auto& layer : saved.layer()) EXPECT_NE(layer.type(), "Split");
  auto other = MakeNet(kTwoHeads);
  // Different random fillers, same after copying.
  other->layer_by_name("a")->blobs()[0]->scale_data(0);
  other->CopyTrainedLayersFrom(saved);
  EXPECT_EQ(DataOf(*other->layer_by_name("a")->blobs()[0]),
            DataOf(*net->layer_by_name("a")->blobs()[0]));
}

TEST(NetTest, CopyWithShapeMismatchNamesLayerAndShapes) {
  auto net = MakeNet(kTwoHeads);
  NetParameter saved;
  net->ToProto(&saved);
  saved.mutable_layer(1)->mutable_blobs(0)->mutable_shape()->set_dim(0, 5);
  ExpectErrorContaining([&] { MakeNet(kTwoHeads)->CopyTrainedLayersFrom(saved); },
                        {"layer 'a'", "5 3 (15)", "2 3 (6)"});
}

TEST(NetTest, UnknownBottomNamesLayerAndBlob) {
  ExpectErrorContaining(
      [] {
        MakeNet(R"(
          layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
          layer { name: "relu" type: "ReLU" bottom: "typo" top: "y" }
        )");
      },
      {"layer 'relu'", "'typo'", "no earlier layer produces"});
}

TEST(NetTest, UnknownLayerTypeListsKnownTypes) {
  ExpectErrorContaining([] { MakeNet(R"(layer { name: "x" type: "Convolutoin" top: "y" })"); },
                        {"layer 'x'", "'Convolutoin'", "known types", "InnerProduct", "ReLU"});
}

TEST(NetTest, ShapeMismatchNamesBothLayersAndShapes) {
  ExpectErrorContaining(
      [] {
        MakeNet(R"(
          layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
          layer { name: "left" type: "InnerProduct" bottom: "x" top: "l" inner_product_param { num_output: 4 } }
          layer { name: "right" type: "InnerProduct" bottom: "x" top: "r" inner_product_param { num_output: 5 } }
          layer { name: "sum" type: "Eltwise" bottom: "l" bottom: "r" top: "s" }
        )");
      },
      {"layer 'sum'", "'left'", "2 4 (8)", "'right'", "2 5 (10)"});
}

// As in Caffe (BVLC's mnist_autoencoder names two losses "loss"), where
// neither layer keeps params or a read position by the name; the first of
// the name is layer_by_name's.
TEST(NetTest, TwoLayersWithoutParamsMayShareAName) {
  auto net = MakeNet(R"(
    layer { name: "in" type: "Input" top: "x" top: "t"
            input_param { shape { dim: 2 dim: 3 } shape { dim: 2 dim: 3 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
            inner_product_param { num_output: 3 weight_filler { type: "gaussian" } } }
    layer { name: "loss" type: "EuclideanLoss" bottom: "y" bottom: "t" top: "l2" }
    layer { name: "loss" type: "SigmoidCrossEntropyLoss" bottom: "y" bottom: "t" top: "xent" }
  )");
  const auto& names = net->layer_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "loss"), 2);
  EXPECT_STREQ(net->layer_by_name("loss")->type(), "EuclideanLoss");
  net->Forward();
  net->Backward();
}

TEST(NetTest, TwoLayersWithParamsSharingANameIsAnError) {
  ExpectErrorContaining(
      [] {
        MakeNet(R"(
          layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
          layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
                  inner_product_param { num_output: 2 } }
          layer { name: "ip" type: "InnerProduct" bottom: "y" top: "z"
                  inner_product_param { num_output: 2 } }
        )");
      },
      {"layers 1 (InnerProduct) and 2 (InnerProduct) are both named 'ip'", "params", "rename one"});
}

TEST(NetTest, TwoProducersOfOneTopIsAnError) {
  ExpectErrorContaining(
      [] {
        MakeNet(R"(
          layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
          layer { name: "p" type: "ReLU" bottom: "x" top: "y" }
          layer { name: "q" type: "Input" top: "y" input_param { shape { dim: 1 } } }
        )");
      },
      {"'y'", "'p'", "'q'"});
}

TEST(NetTest, PrototxtSyntaxErrorGivesFileLineAndColumn) {
  const std::string path = ::testing::TempDir() + "/broken_net.prototxt";
  {
    std::ofstream out(path);
    out << "name: \"broken\"\nlayer {\n  name: \"a\"\n  type: \"ReLU\"\n  bottom \"x\"\n}\n";
  }
  ExpectErrorContaining([&] { Net net(path, TRAIN); }, {path + ":5:10:"});
  std::remove(path.c_str());
}

TEST(NetTest, MissingFileNamesThePath) {
  ExpectErrorContaining([] { Net net("/nonexistent/net.prototxt", TRAIN); },
                        {"/nonexistent/net.prototxt"});
}

TEST(NetTest, DummyDataNetIsReproducibleForASeed) {
  const char* text = R"(
    layer { name: "d" type: "DummyData" top: "x"
            dummy_data_param { shape { dim: 2 dim: 3 } data_filler { type: "gaussian" } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
            inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
  )";
  auto a = MakeNet(text);
  auto b = MakeNet(text);
  a->Forward();
  b->Forward();
  EXPECT_EQ(DataOf(*a->blob_by_name("y")), DataOf(*b->blob_by_name("y")));
}

}  // namespace
}  // namespace demi

namespace demi {
namespace {

TEST(UpgradeTest, OldDataLayerTransformationFieldsMoveToTransformParam) {
  NetParameter param = ParseText<NetParameter>(R"(
    layer { name: "d" type: "Data" top: "x" data_param { source: "s" batch_size: 4 scale: 0.5
            mean_file: "m.binaryproto" crop_size: 7 mirror: true } }
    layer { name: "i" type: "ImageData" top: "y" image_data_param { source: "l" crop_size: 3 } }
  )");
  ASSERT_TRUE(UpgradeNetAsNeeded("test", &param));
  const LayerParameter& data = param.layer(0);
  EXPECT_FLOAT_EQ(data.transform_param().scale(), 0.5f);
  EXPECT_EQ(data.transform_param().mean_file(), "m.binaryproto");
  EXPECT_EQ(data.transform_param().crop_size(), 7u);
  EXPECT_TRUE(data.transform_param().mirror());
  EXPECT_FALSE(data.data_param().has_scale());
  EXPECT_EQ(data.data_param().batch_size(), 4u);
  EXPECT_EQ(param.layer(1).transform_param().crop_size(), 3u);
  EXPECT_FALSE(param.layer(1).has_data_param());  // the check does not create fields
  EXPECT_FALSE(UpgradeNetAsNeeded("test", &param));
}

TEST(NetTest, CudnnWorkspaceBudgetReachesEveryLayer) {
  const std::string layers = R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 } } }
    layer { name: "relu" type: "ReLU" bottom: "x" top: "y" })";
  Net by_default(ParseText<NetParameter>(layers));
  EXPECT_EQ(by_default.layers()[1]->context().cudnn_workspace_bytes, size_t{256} << 20);
  Net small(ParseText<NetParameter>(std::string("cudnn_workspace_mb: 8") + layers));
  for (const auto& layer : small.layers()) {
    EXPECT_EQ(layer->context().cudnn_workspace_bytes, size_t{8} << 20);
  }
}

}  // namespace
}  // namespace demi
