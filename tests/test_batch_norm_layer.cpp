#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "demi/layers/batch_norm_layer.hpp"
#include "demi/net.hpp"
#include "gradient_checker.hpp"
#include "net_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class BatchNormLayerTest : public ::testing::Test {
 protected:
  BatchNormLayerTest() : x_({4, 2}) {
    // Channel 0: 1 1 3 3 (mean 2, variance 1); channel 1: 2 4 6 8 (mean 5, variance 5).
    FillValues(&x_, {1, 2, 1, 4, 3, 6, 3, 8});
  }
  Blob x_;
  Blob y_;
  std::vector<Blob*> bottom_vec_{&x_};
  std::vector<Blob*> top_vec_{&y_};
};

TEST_F(BatchNormLayerTest, TrainForwardNormalizesEachChannelByHand) {
  auto layer = MakeLayer(R"(type: "BatchNorm" phase: TRAIN)");
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  // Channel 0: (x - 2) / 1; channel 1: (x - 5) / sqrt(5), 1 / sqrt(5) = 0.4472136.
  ExpectNear(DataOf(y_), {-1, -1.3416408f, -1, -0.4472136f, 1, 0.4472136f, 1, 1.3416408f}, 2e-5f);
}

TEST_F(BatchNormLayerTest, TrainForwardOn4DByHand) {
  Blob x({2, 2, 1, 2});
  // Image 0: channel 0 (1 3), channel 1 (0 0); image 1: (1 3), (4 4).
  // Channel 0 over N, H, W: 1 3 1 3, mean 2, variance 1; channel 1: 0 0 4 4,
  // mean 2, variance 4.
  FillValues(&x, {1, 3, 0, 0, 1, 3, 4, 4});
  std::vector<Blob*> bottom{&x};
  auto layer = MakeLayer(R"(type: "BatchNorm")");
  layer->SetUp(bottom, top_vec_);
  layer->Forward(bottom, top_vec_);
  EXPECT_EQ(y_.shape(), x.shape());
  ExpectNear(DataOf(y_), {-1, 1, -1, -1, -1, 1, 1, 1}, 2e-5f);
}

TEST_F(BatchNormLayerTest, RunningStatisticsAfterTwoPassesByHand) {
  auto layer = MakeLayer(R"(type: "BatchNorm" phase: TRAIN
                            batch_norm_param { moving_average_fraction: 0.5 })");
  layer->SetUp(bottom_vec_, top_vec_);
  ASSERT_EQ(layer->blobs().size(), 3u);
  EXPECT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(layer->blobs()[1]->shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(layer->blobs()[2]->shape(), (std::vector<int64_t>{1}));
  EXPECT_EQ(DataOf(*layer->blobs()[2]), (std::vector<float>{0}));

  layer->Forward(bottom_vec_, top_vec_);
  // m = 4: factor 1; mean sums (2, 5); unbiased variances (1, 5) * 4/3.
  EXPECT_EQ(DataOf(*layer->blobs()[2]), (std::vector<float>{1}));
  ExpectNear(DataOf(*layer->blobs()[0]), {2, 5}, 1e-6f);
  ExpectNear(DataOf(*layer->blobs()[1]), {1.3333333f, 6.6666667f}, 1e-5f);

  // Channel 0: 0 0 0 4 (mean 1, variance 3, unbiased 4); channel 1: all 10
  // (mean 10, variance 0).
  FillValues(&x_, {0, 10, 0, 10, 0, 10, 4, 10});
  layer->Forward(bottom_vec_, top_vec_);
  // factor 0.5 * 1 + 1; means 0.5 * (2, 5) + (1, 10); variances
  // 0.5 * (4/3, 20/3) + (4, 0).
  EXPECT_EQ(DataOf(*layer->blobs()[2]), (std::vector<float>{1.5}));
  ExpectNear(DataOf(*layer->blobs()[0]), {2, 12.5}, 1e-5f);
  ExpectNear(DataOf(*layer->blobs()[1]), {4.6666667f, 3.3333333f}, 1e-5f);
  // This batch's own statistics normalize it: (x - 1) / sqrt(3), and 0 for
  // the constant channel.
  ExpectNear(DataOf(y_), {-0.5773503f, 0, -0.5773503f, 0, -0.5773503f, 0, 1.7320508f, 0}, 2e-5f);

  // A TEST-phase layer given these blobs uses blob / factor: means
  // (4/3, 25/3), variances (28/9, 20/9).
  auto test = MakeLayer(R"(type: "BatchNorm" phase: TEST)");
  test->SetUp(bottom_vec_, top_vec_);
  for (int i = 0; i < 3; ++i) test->blobs()[i]->CopyFrom(*layer->blobs()[i]);
  // x = mean gives 0; x = mean +- sqrt(variance) gives +-1.
  FillValues(
      &x_, {1.3333333f, 8.3333333f, 1.3333333f + 1.7638342f, 8.3333333f - 1.4907120f, 0, 0, 0, 0});
  test->Forward(bottom_vec_, top_vec_);
  ExpectNear(std::vector<float>(y_.cpu_data(), y_.cpu_data() + 4), {0, 0, 1, -1}, 2e-5f);
  EXPECT_EQ(DataOf(*test->blobs()[2]), (std::vector<float>{1.5}));  // TEST updates nothing
}

TEST_F(BatchNormLayerTest, GlobalStatisticsForwardAndBackwardByHand) {
  auto layer = MakeLayer(R"(type: "BatchNorm" phase: TEST)");
  Blob x({2, 2});
  FillValues(&x, {3, 5, -1, 2});
  std::vector<Blob*> bottom{&x};
  layer->SetUp(bottom, top_vec_);
  // Sums (2, 8) and (8, 2) with factor 2: means (1, 4), variances (4, 1).
  FillValues(layer->blobs()[0].get(), {2, 8});
  FillValues(layer->blobs()[1].get(), {8, 2});
  FillValues(layer->blobs()[2].get(), {2});
  layer->Forward(bottom, top_vec_);
  ExpectNear(DataOf(y_), {1, 1, -1, -2}, 2e-5f);
  const std::vector<float> dy{2, 3, 4, 5};
  std::copy(dy.begin(), dy.end(), y_.mutable_cpu_diff());
  layer->Backward(top_vec_, {true}, bottom);
  ExpectNear(DiffOf(x), {1, 3, 2, 5}, 1e-4f);  // dy / sqrt(variance + eps)
  // Global statistics are read, never updated.
  EXPECT_EQ(DataOf(*layer->blobs()[0]), (std::vector<float>{2, 8}));
  EXPECT_EQ(DataOf(*layer->blobs()[1]), (std::vector<float>{8, 2}));
  EXPECT_EQ(DataOf(*layer->blobs()[2]), (std::vector<float>{2}));

  // A zero factor (nothing accumulated yet) means zero statistics: y = x / sqrt(eps).
  FillValues(layer->blobs()[2].get(), {0});
  layer->Forward(bottom, top_vec_);
  ExpectNear(DataOf(y_), {948.68330f, 1581.1388f, -316.22777f, 632.45553f}, 1e-2f);
}

TEST_F(BatchNormLayerTest, TrainBackwardByHand) {
  auto layer = MakeLayer(R"(type: "BatchNorm")");
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  // Channel 0: y = -1 -1 1 1, dy = 1 0 0 0: mean(dy) = 1/4, mean(dy y) = -1/4,
  // dx = dy - 1/4 + y / 4 = 1/2 -1/2 0 0. Channel 1: dy = 0 gives dx = 0.
  FillValues(&x_, {0, 0, 0, 0, 0, 0, 0, 0});  // Backward must not read the bottom
  const std::vector<float> dy{1, 0, 0, 0, 0, 0, 0, 0};
  std::copy(dy.begin(), dy.end(), y_.mutable_cpu_diff());
  layer->Backward(top_vec_, {true}, bottom_vec_);
  ExpectNear(DiffOf(x_), {0.5f, 0, -0.5f, 0, 0, 0, 0, 0}, 2e-5f);
}

TEST_F(BatchNormLayerTest, UseGlobalStatsDefaultsByPhaseAndCanBeForced) {
  auto train = MakeLayer(R"(type: "BatchNorm" phase: TRAIN)");
  train->SetUp(bottom_vec_, top_vec_);
  train->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(train->blobs()[2]->cpu_data()[0], 1.0f);

  auto test = MakeLayer(R"(type: "BatchNorm" phase: TEST)");
  test->SetUp(bottom_vec_, top_vec_);
  test->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(test->blobs()[2]->cpu_data()[0], 0.0f);

  auto forced = MakeLayer(R"(type: "BatchNorm" phase: TRAIN
                             batch_norm_param { use_global_stats: true })");
  forced->SetUp(bottom_vec_, top_vec_);
  forced->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(forced->blobs()[2]->cpu_data()[0], 0.0f);
}

TEST_F(BatchNormLayerTest, StatisticsAreNeverLearned) {
  auto plain = MakeLayer(R"(name: "bn" type: "BatchNorm")");
  ASSERT_EQ(plain->layer_param().param_size(), 3);
  for (const ParamSpec& spec : plain->layer_param().param()) {
    EXPECT_EQ(spec.lr_mult(), 0.0f);
    EXPECT_EQ(spec.decay_mult(), 0.0f);
  }
  auto given = MakeLayer(R"(name: "bn" type: "BatchNorm"
                            param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 0 })");
  ASSERT_EQ(given->layer_param().param_size(), 3);
  for (const ParamSpec& spec : given->layer_param().param()) {
    EXPECT_EQ(spec.lr_mult(), 0.0f);
    EXPECT_EQ(spec.decay_mult(), 0.0f);
  }
  // Backward leaves the statistics' diffs alone.
  given->SetUp(bottom_vec_, top_vec_);
  given->Forward(bottom_vec_, top_vec_);
  for (auto& blob : given->blobs()) Set(blob->count(), 0.0f, blob->mutable_cpu_diff());
  Set(y_.count(), 1.0f, y_.mutable_cpu_diff());
  given->Backward(top_vec_, {true}, bottom_vec_);
  for (auto& blob : given->blobs()) EXPECT_EQ(blob->asum_diff(), 0.0);
}

TEST_F(BatchNormLayerTest, BuffersAndBackwardReads) {
  auto layer = MakeLayer(R"(type: "BatchNorm")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsTopData(0));
  layer->SetUp(bottom_vec_, top_vec_);
  ASSERT_EQ(layer->buffers().size(), 2u);
  EXPECT_EQ(layer->buffers()[0].name, "mean");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kScratch);
  EXPECT_EQ(layer->buffers()[1].name, "inv_std");
  EXPECT_EQ(layer->buffers()[1].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(layer->buffers()[1].blob->shape(), (std::vector<int64_t>{2}));

  auto in_place = MakeLayer(R"(type: "BatchNorm")");
  in_place->SetUp(bottom_vec_, bottom_vec_);
  ASSERT_EQ(in_place->buffers().size(), 3u);
  EXPECT_EQ(in_place->buffers()[2].name, "x_norm");
  EXPECT_EQ(in_place->buffers()[2].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(in_place->buffers()[2].blob->shape(), x_.shape());

  // With global statistics Backward needs no y, so in place keeps no copy.
  auto global = MakeLayer(R"(type: "BatchNorm" phase: TEST)");
  global->SetUp(bottom_vec_, bottom_vec_);
  EXPECT_EQ(global->buffers().size(), 2u);
}

TEST_F(BatchNormLayerTest, InPlaceMatchesOutOfPlaceEvenWhenTheBlobIsOverwritten) {
  Blob x({3, 4, 2, 3});
  FillGaussian(&x, 71, 2.0f);
  Blob dy({3, 4, 2, 3});
  FillGaussian(&dy, 72);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto plain = MakeLayer(R"(type: "BatchNorm")");
  plain->SetUp(bottom, top);
  plain->Forward(bottom, top);
  Copy(dy.count(), dy.cpu_data(), y.mutable_cpu_diff());
  plain->Backward(top, {true}, bottom);

  Blob z({3, 4, 2, 3});
  z.CopyFrom(x);
  std::vector<Blob*> both{&z};
  auto in_place = MakeLayer(R"(type: "BatchNorm")");
  in_place->SetUp(both, both);
  in_place->Forward(both, both);
  EXPECT_EQ(DataOf(z), DataOf(y));
  // A following in-place Scale overwrites the blob before this Backward.
  FillGaussian(&z, 73);
  Copy(dy.count(), dy.cpu_data(), z.mutable_cpu_diff());
  in_place->Backward(both, {true}, both);
  EXPECT_EQ(DiffOf(z), DiffOf(x));
}

TEST_F(BatchNormLayerTest, TrainGradient) {
  GradientChecker checker(1e-3f, 1e-3f);
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {5, 3}, {13, 2}, {2, 3, 3, 2}, {1, 13, 1, 3}, {4, 1, 5, 1}}) {
    Blob x(shape);
    FillGaussian(&x, 74, 1.5f);
    std::vector<Blob*> bottom{&x};
    auto layer = MakeLayer(R"(type: "BatchNorm" phase: TRAIN)");
    SCOPED_TRACE(x.shape_string());
    checker.CheckGradientBottomsOnly(layer.get(), bottom, top_vec_);
  }
}

TEST_F(BatchNormLayerTest, GlobalStatsGradient) {
  Blob x({2, 3, 2, 2});
  FillGaussian(&x, 75);
  std::vector<Blob*> bottom{&x};
  auto layer = MakeLayer(R"(type: "BatchNorm" phase: TEST
                            batch_norm_param { use_global_stats: true eps: 0.001 })");
  layer->SetUp(bottom, top_vec_);
  FillValues(layer->blobs()[0].get(), {0.5, -1, 2});
  FillValues(layer->blobs()[1].get(), {1, 0.25, 4});
  FillValues(layer->blobs()[2].get(), {0.5});
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradientBottomsOnly(layer.get(), bottom, top_vec_);
  // The set-up kept the statistics given by hand.
  EXPECT_EQ(DataOf(*layer->blobs()[1]), (std::vector<float>{1, 0.25, 4}));
}

TEST_F(BatchNormLayerTest, Errors) {
  Blob flat({6});
  std::vector<Blob*> one_axis{&flat};
  auto layer = MakeLayer(R"(name: "bn" type: "BatchNorm")");
  ExpectErrorContaining([&] { layer->SetUp(one_axis, top_vec_); },
                        {"BatchNorm layer 'bn'", "N x C", "6 (6)"});
  layer->SetUp(bottom_vec_, top_vec_);
  x_.Reshape({4, 3});
  ExpectErrorContaining([&] { layer->Reshape(bottom_vec_, top_vec_); },
                        {"BatchNorm layer 'bn'", "set up for 2 channels", "4 3 (12)"});

  auto preloaded = LayerRegistry::Create(ParseText<LayerParameter>(R"(
      name: "bn" type: "BatchNorm"
      blobs { shape { dim: 3 } data: 0 data: 0 data: 0 }
      blobs { shape { dim: 3 } data: 1 data: 1 data: 1 }
      blobs { shape { dim: 1 } data: 1 })"));
  x_.Reshape({4, 2});
  ExpectErrorContaining([&] { preloaded->SetUp(bottom_vec_, top_vec_); },
                        {"BatchNorm layer 'bn'", "given 3 blobs", "4 2 (8)", "2 means"});
}

// BatchNorm + Scale in place, as in ResNet; then a Scale and a BatchNorm out
// of place, whose bottom (Scale) and top (BatchNorm) only their own
// declarations keep alive until their Backward. A planned net trains bit for
// bit like the unplanned one, and the solver never learns the statistics.
const char* kBnNet = R"(
  name: "bn_net"
  layer { name: "data" type: "DummyData" top: "x"
          dummy_data_param { shape { dim: 6 dim: 3 dim: 2 dim: 2 } data_filler { type: "gaussian" } } }
  layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
          inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "bn" type: "BatchNorm" bottom: "h" top: "h" }
  layer { name: "scale" type: "Scale" bottom: "h" top: "h" scale_param { bias_term: true } }
  layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "g"
          inner_product_param { num_output: 4 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "scale2" type: "Scale" bottom: "g" top: "gs"
          scale_param { filler { type: "uniform" min: 0.5 max: 1.5 } } }
  layer { name: "bn2" type: "BatchNorm" bottom: "gs" top: "gn" }
  layer { name: "relu" type: "ReLU" bottom: "gn" top: "r" }
  layer { name: "ip3" type: "InnerProduct" bottom: "r" top: "out" loss_weight: 1
          inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.3 } } }
)";

std::vector<float> TrainBnNet(MemoryOptimization strategy, std::vector<float>* params) {
  NetParameter param = ParseText<NetParameter>(kBnNet);
  param.set_memory_optimization(strategy);
  param.mutable_state()->set_phase(TRAIN);
  Net net(param, Context());
  const auto bn = net.layer_by_name("bn");
  const auto bn2 = net.layer_by_name("bn2");
  int statistics = 0;
  for (size_t i = 0; i < net.learnable_params().size(); ++i) {
    bool statistic = false;
    for (const auto& layer : {bn, bn2}) {
      for (const auto& blob : layer->blobs()) statistic |= blob.get() == net.learnable_params()[i];
    }
    statistics += statistic;
    EXPECT_EQ(net.params_lr()[i] == 0.0f, statistic) << "param " << i;
    EXPECT_EQ(net.params_weight_decay()[i] == 0.0f, statistic) << "param " << i;
  }
  EXPECT_EQ(statistics, 6);
  std::vector<float> losses;
  for (int step = 0; step < 4; ++step) {
    net.ClearParamDiffs();
    losses.push_back(net.ForwardBackward());
    for (Blob* blob : net.learnable_params()) blob->scale_diff(0.05f);
    net.Update();
  }
  // Four passes with fraction 0.999: 1 + 0.999 + 0.998001 + 0.997002999.
  EXPECT_NEAR(bn->blobs()[2]->cpu_data()[0], 3.994004f, 1e-5f);
  for (const auto& blob : net.params()) {
    const std::vector<float> values = DataOf(*blob);
    params->insert(params->end(), values.begin(), values.end());
  }
  return losses;
}

TEST(BatchNormNetTest, PlannedNetTrainsBitIdenticalToUnplanned) {
  std::vector<float> none_params, arena_params;
  const std::vector<float> expected = TrainBnNet(NONE, &none_params);
  EXPECT_EQ(TrainBnNet(ARENA, &arena_params), expected);
  EXPECT_EQ(arena_params, none_params);
  for (float loss : expected) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NE(expected.front(), expected.back());  // the params did learn
}

// ---- NVCaffe's scale_bias: the layer's own learned gamma and beta ----

std::unique_ptr<Layer> ScaleBiasLayer(const std::string& extra = "") {
  return MakeLayer(R"(type: "BatchNorm" phase: TRAIN batch_norm_param { scale_bias: true )" +
                   extra + " }");
}

TEST_F(BatchNormLayerTest, ScaleBiasForwardByHand) {
  auto layer = ScaleBiasLayer();
  layer->SetUp(bottom_vec_, top_vec_);
  ASSERT_EQ(layer->blobs().size(), 5u);
  EXPECT_EQ(DataOf(*layer->blobs()[3]), (std::vector<float>{1, 1}));  // the default fillers
  EXPECT_EQ(DataOf(*layer->blobs()[4]), (std::vector<float>{0, 0}));
  FillValues(layer->blobs()[3].get(), {2, -1});
  FillValues(layer->blobs()[4].get(), {0.5, 1});
  layer->Forward(bottom_vec_, top_vec_);
  // x_hat as in TrainForwardNormalizesEachChannelByHand, then 2 x_hat + 0.5
  // (channel 0) and 1 - x_hat (channel 1).
  ExpectNear(DataOf(y_),
             {-1.5f, 2.3416408f, -1.5f, 1.4472136f, 2.5f, 0.5527864f, 2.5f, -0.3416408f}, 2e-5f);
}

TEST_F(BatchNormLayerTest, ScaleBiasBlobsSpecsAndBuffers) {
  // A filler alone turns scale_bias on, as in NVCaffe.
  auto layer = MakeLayer(R"(type: "BatchNorm"
      batch_norm_param { scale_filler { type: "constant" value: 3 } })");
  layer->SetUp(bottom_vec_, top_vec_);
  ASSERT_EQ(layer->blobs().size(), 5u);
  EXPECT_EQ(DataOf(*layer->blobs()[3]), (std::vector<float>{3, 3}));
  const LayerParameter& param = layer->layer_param();
  ASSERT_EQ(param.param_size(), 5);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(param.param(i).lr_mult(), 0.0f);
  for (int i = 3; i < 5; ++i) {
    EXPECT_EQ(param.param(i).lr_mult(), 1.0f);
    EXPECT_EQ(param.param(i).decay_mult(), 1.0f);
  }
  // It keeps x_hat and never reads its top's data, in place or not.
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_EQ(layer->SavedOutputCopy(), nullptr);  // x_hat is not the top
  bool keeps = false;
  for (const LayerBuffer& buffer : layer->buffers()) keeps |= buffer.name == "x_norm";
  EXPECT_TRUE(keeps);
  // Five blobs from a .caffemodel fit; three do not.
  auto preloaded = LayerRegistry::Create(ParseText<LayerParameter>(R"(
      name: "bn" type: "BatchNorm" batch_norm_param { scale_bias: true }
      blobs { shape { dim: 2 } data: 0 data: 0 }
      blobs { shape { dim: 2 } data: 1 data: 1 }
      blobs { shape { dim: 1 } data: 1 })"));
  ExpectErrorContaining([&] { preloaded->SetUp(bottom_vec_, top_vec_); },
                        {"given 3 blobs", "it needs 5", "2 scales and 2 biases (scale_bias)"});
}

TEST_F(BatchNormLayerTest, ScaleBiasGradient) {
  GradientChecker checker(1e-3f, 1e-3f);
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{5, 3}, {2, 3, 3, 2}, {1, 13, 1, 3}}) {
    Blob x(shape);
    FillGaussian(&x, 76, 1.5f);
    std::vector<Blob*> bottom{&x};
    auto layer = ScaleBiasLayer(
        R"(scale_filler { type: "uniform" min: 0.5 max: 2 } bias_filler { type: "gaussian" })");
    SCOPED_TRACE(x.shape_string());
    // The statistics blobs are checked too: the output does not depend on
    // them with batch statistics, and their gradient is 0.
    checker.CheckGradient(layer.get(), bottom, top_vec_);
  }
}

TEST_F(BatchNormLayerTest, ScaleBiasGlobalStatsGradient) {
  Blob x({2, 3, 2, 2});
  FillGaussian(&x, 77);
  std::vector<Blob*> bottom{&x};
  auto layer = MakeLayer(R"(type: "BatchNorm" phase: TEST
      batch_norm_param { use_global_stats: true eps: 0.001 scale_bias: true })");
  layer->SetUp(bottom, top_vec_);
  FillValues(layer->blobs()[0].get(), {0.5, -1, 2});
  FillValues(layer->blobs()[1].get(), {1, 0.25, 4});
  FillValues(layer->blobs()[2].get(), {0.5});
  FillValues(layer->blobs()[3].get(), {1.5, -2, 0.25});
  FillValues(layer->blobs()[4].get(), {0.1, 0.2, 0.3});
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradientBottomsOnly(layer.get(), bottom, top_vec_);
}

// ---- a ReLU absorbed (Net's fuse_layers): y = relu(gamma x_hat + beta) ----

/// A ReLU layer with negative_slope `slope`, for a BatchNorm to absorb.
std::unique_ptr<Layer> ReLUWithSlope(float slope) {
  return MakeLayer(StrCat(R"(type: "ReLU" relu_param { negative_slope: )", slope, " }"));
}

TEST_F(BatchNormLayerTest, AbsorbedReLUGradient) {
  // Batch statistics, and global ones; the gradient is checked away from the
  // ReLU's kink: these inputs put no gamma x_hat + beta within a step of 0.
  for (float slope : {0.0f, 0.1f}) {
    for (bool global : {false, true}) {
      SCOPED_TRACE(StrCat("slope ", slope, global ? ", global statistics" : ""));
      Blob x({2, 3, 2, 2});
      FillGaussian(&x, 80, 1.5f);
      std::vector<Blob*> bottom{&x};
      auto layer = ScaleBiasLayer(StrCat(R"(bias_filler { type: "uniform" min: -0.5 max: 0.5 })",
                                         global ? " use_global_stats: true eps: 0.001" : ""));
      layer->SetUp(bottom, top_vec_);
      if (global) {
        FillValues(layer->blobs()[0].get(), {0.5, -1, 2});
        FillValues(layer->blobs()[1].get(), {1, 0.25, 4});
        FillValues(layer->blobs()[2].get(), {0.5});
      }
      auto relu = ReLUWithSlope(slope);
      ASSERT_TRUE(layer->Absorb(relu.get()));
      layer->Forward(bottom, top_vec_);
      const std::vector<float> y = DataOf(y_);
      EXPECT_EQ(std::count_if(y.begin(), y.end(), [](float v) { return v < 0; }) > 0, slope > 0);
      GradientChecker checker(global ? 1e-2f : 1e-3f, 1e-3f);
      if (global) {
        checker.CheckGradientBottomsOnly(layer.get(), bottom, top_vec_);
      } else {
        checker.CheckGradient(layer.get(), bottom, top_vec_);
      }
    }
  }
}

TEST_F(BatchNormLayerTest, AbsorbsAReLUOnlyAfterAnAffinePartAndOnlyOne) {
  auto plain = MakeLayer(R"(type: "BatchNorm" phase: TRAIN)");
  plain->SetUp(bottom_vec_, top_vec_);
  EXPECT_FALSE(plain->Absorb(ReLUWithSlope(0).get()));  // the ReLU's gradient needs x_hat kept
  auto affine = ScaleBiasLayer();
  affine->SetUp(bottom_vec_, top_vec_);
  EXPECT_FALSE(affine->Absorb(ReLUWithSlope(-0.5f).get()));  // left to the ReLU to reject
  EXPECT_TRUE(affine->Absorb(ReLUWithSlope(0).get()));
  EXPECT_FALSE(affine->Absorb(ReLUWithSlope(0).get()));
}

/// BatchNorm + Scale(bias) with gamma and beta, against one BatchNorm with
/// scale_bias and the same gamma and beta: the same top, bottom gradient and
/// gamma and beta gradients, in place or not.
TEST_F(BatchNormLayerTest, ScaleBiasEqualsABatchNormScalePair) {
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "in place" : "out of place");
    Blob x({3, 4, 2, 3}), dy({3, 4, 2, 3});
    FillGaussian(&x, 78, 2.0f);
    FillGaussian(&dy, 79);
    const std::vector<float> gamma{1.5, -0.5, 2, 0.25}, beta{0.1, -0.2, 0.3, 0};

    Blob pair_x({3, 4, 2, 3}), normalized, pair_y;
    pair_x.CopyFrom(x);
    std::vector<Blob*> bn_bottom{&pair_x}, bn_top{in_place ? &pair_x : &normalized};
    std::vector<Blob*> scale_top{in_place ? &pair_x : &pair_y};
    auto bn = MakeLayer(R"(type: "BatchNorm" phase: TRAIN)");
    auto scale = MakeLayer(R"(type: "Scale" scale_param { bias_term: true })");
    bn->SetUp(bn_bottom, bn_top);
    scale->SetUp(bn_top, scale_top);
    if (in_place) scale->ShareSavedInput(bn->SavedOutputCopy());
    scale->set_param_propagate_down(0, true);
    scale->set_param_propagate_down(1, true);
    FillValues(scale->blobs()[0].get(), gamma);
    FillValues(scale->blobs()[1].get(), beta);
    bn->Forward(bn_bottom, bn_top);
    scale->Forward(bn_top, scale_top);
    const std::vector<float> pair_out = DataOf(*scale_top[0]);
    Copy(dy.count(), dy.cpu_data(), scale_top[0]->mutable_cpu_diff());
    scale->Backward(scale_top, {true}, bn_top);
    bn->Backward(bn_top, {true}, bn_bottom);

    Blob one_x({3, 4, 2, 3}), one_y;
    one_x.CopyFrom(x);
    std::vector<Blob*> bottom{&one_x}, top{in_place ? &one_x : &one_y};
    auto one = ScaleBiasLayer();
    one->SetUp(bottom, top);
    FillValues(one->blobs()[3].get(), gamma);
    FillValues(one->blobs()[4].get(), beta);
    one->Forward(bottom, top);
    ExpectNear(DataOf(*top[0]), pair_out, 1e-6f);
    Copy(dy.count(), dy.cpu_data(), top[0]->mutable_cpu_diff());
    one->Backward(top, {true}, bottom);
    ExpectNear(DiffOf(one_x), DiffOf(pair_x), 1e-5f);
    ExpectNear(DiffOf(*one->blobs()[3]), DiffOf(*scale->blobs()[0]), 1e-4f);
    ExpectNear(DiffOf(*one->blobs()[4]), DiffOf(*scale->blobs()[1]), 1e-4f);
  }
}

// ResNet's conv -> BatchNorm -> Scale -> ReLU, in place, against NVCaffe's
// conv -> BatchNorm(scale_bias) -> ReLU.
std::string ResNetStem(bool scale_bias) {
  const std::string norm = scale_bias
                               ? R"(layer { name: "bn" type: "BatchNorm" bottom: "c" top: "c"
                       batch_norm_param { scale_bias: true } })"
                               : R"(layer { name: "bn" type: "BatchNorm" bottom: "c" top: "c" }
               layer { name: "scale" type: "Scale" bottom: "c" top: "c"
                       scale_param { bias_term: true } })";
  return R"(name: "stem")" + ConvStemText(8, 8) + norm + R"(
    layer { name: "relu" type: "ReLU" bottom: "c" top: "c" }
    layer { name: "ip" type: "InnerProduct" bottom: "c" top: "out" loss_weight: 1
            inner_product_param { num_output: 3 weight_filler { type: "xavier" } } })";
}

TEST(BatchNormNetTest, ScaleBiasPlansNoMoreThanTheBatchNormScalePair) {
  for (MemoryOptimization strategy : {NONE, ARENA}) {
    NetParameter pair = ParseText<NetParameter>(ResNetStem(false));
    NetParameter one = ParseText<NetParameter>(ResNetStem(true));
    for (NetParameter* param : {&pair, &one}) {
      param->mutable_state()->set_phase(TRAIN);
      param->set_memory_optimization(strategy);
    }
    const Net pair_net(pair, Context()), one_net(one, Context());
    EXPECT_LE(one_net.memory_plan().arena_bytes, pair_net.memory_plan().arena_bytes)
        << MemoryOptimization_Name(strategy);
    EXPECT_LE(one_net.memory_plan().lower_bound_bytes, pair_net.memory_plan().lower_bound_bytes);
  }
}

TEST(BatchNormNetTest, ScaleBiasPlannedNetTrainsBitIdenticalToUnplanned) {
  auto train = [](MemoryOptimization strategy) {
    NetParameter param = ParseText<NetParameter>(ResNetStem(true));
    param.set_memory_optimization(strategy);
    param.mutable_state()->set_phase(TRAIN);
    Net net(param, Context());
    std::vector<float> values;
    for (int step = 0; step < 4; ++step) {
      net.ClearParamDiffs();
      values.push_back(net.ForwardBackward());
      for (Blob* blob : net.learnable_params()) blob->scale_diff(0.05f);
      net.Update();
    }
    for (const auto& blob : net.layer_by_name("bn")->blobs()) {
      const std::vector<float> data = DataOf(*blob);
      values.insert(values.end(), data.begin(), data.end());
    }
    return values;
  };
  const std::vector<float> none = train(NONE);
  EXPECT_EQ(train(ARENA), none);
  EXPECT_NE(none[0], none[3]);  // gamma, beta and the rest learned
}

}  // namespace
}  // namespace demi
