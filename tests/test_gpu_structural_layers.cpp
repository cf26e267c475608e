// CUDA twins of the structural, loss and normalization layers against their
// CPU code: Concat, Slice, Tile, Crop, BatchReindex, Filter, Embed,
// Reduction, Softmax, MVN, Accuracy, the loss layers, and the data layer's
// copy to the device.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "gpu_test_util.hpp"

namespace demi {
namespace {

/// A case with the defaults of the fields not given.
GpuCase Case(std::string layer, std::vector<std::vector<int64_t>> bottoms,
             std::function<void(int, Blob*)> fill = {}, std::vector<bool> propagate_down = {}) {
  GpuCase c;
  c.layer = std::move(layer);
  c.bottoms = std::move(bottoms);
  c.fill = std::move(fill);
  c.propagate_down = std::move(propagate_down);
  return c;
}

/// Integer labels in [0, classes) as floats; with `ignore_every` > 0, labels
/// 1, 1 + ignore_every, ... are `ignore_value` instead.
void FillLabels(Blob* blob, int classes, uint32_t seed, int ignore_every = 0,
                float ignore_value = -1.0f) {
  RandomEngine engine(seed);
  std::uniform_int_distribution<int> pick(0, classes - 1);
  float* data = blob->mutable_cpu_data();
  for (int64_t i = 0; i < blob->count(); ++i) {
    data[i] = static_cast<float>(pick(engine));
    if (ignore_every > 0 && i % ignore_every == 1) data[i] = ignore_value;
  }
}

/// Gaussian values moved at least 0.1 away from 0, where |x| has its kink.
void FillAwayFromZero(Blob* blob, uint32_t seed) {
  FillGaussian(blob, seed);
  float* data = blob->mutable_cpu_data();
  for (int64_t i = 0; i < blob->count(); ++i) data[i] += data[i] >= 0 ? 0.1f : -0.1f;
}

/// Bottom 0 (and 1, ... up to `data_bottoms`) Gaussian, the last one labels.
std::function<void(int, Blob*)> DataThenLabels(int data_bottoms, int classes, int ignore_every = 0,
                                               float ignore_value = -1.0f) {
  return [=](int index, Blob* blob) {
    if (index < data_bottoms) {
      FillGaussian(blob, 1000 + static_cast<uint32_t>(index));
    } else {
      FillLabels(blob, classes, 77, ignore_every, ignore_value);
    }
  };
}

/// ExpectGpuMatchesCpu with `num_tops` tops, for layers whose top count the
/// case cannot imply (Slice and Filter with several tops, the optional second
/// tops of Accuracy and SoftmaxWithLoss), and with the gradient checked one
/// propagating bottom at a time (ContrastiveLoss, whose labels must stay
/// out of the check). For layers without params.
void ExpectGpuMatchesCpuWithTops(const GpuCase& c, int num_tops) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  std::vector<std::unique_ptr<Blob>> owned;
  auto make = [&owned](const std::vector<int64_t>& shape) {
    owned.push_back(std::make_unique<Blob>(shape));
    return owned.back().get();
  };
  std::vector<Blob*> cpu_bottom, gpu_bottom, cpu_top, gpu_top;
  for (size_t i = 0; i < c.bottoms.size(); ++i) {
    cpu_bottom.push_back(make(c.bottoms[i]));
    if (c.fill) {
      c.fill(static_cast<int>(i), cpu_bottom.back());
    } else {
      FillGaussian(cpu_bottom.back(), 1000 + static_cast<uint32_t>(i));
    }
    gpu_bottom.push_back(make(c.bottoms[i]));
    gpu_bottom.back()->CopyFrom(*cpu_bottom.back());
  }
  for (int t = 0; t < num_tops; ++t) {
    cpu_top.push_back(make({}));
    gpu_top.push_back(make({}));
  }
  auto cpu_layer = MakeLayerOn(c.layer, Device::kCPU);
  auto gpu_layer = MakeLayerOn(c.layer, Device::kGPU);
  cpu_layer->SetUp(cpu_bottom, cpu_top);
  gpu_layer->SetUp(gpu_bottom, gpu_top);
  ASSERT_TRUE(cpu_layer->blobs().empty()) << "use ExpectGpuMatchesCpu for layers with params";
  cpu_layer->Forward(cpu_bottom, cpu_top);
  gpu_layer->Forward(gpu_bottom, gpu_top);
  for (int t = 0; t < num_tops; ++t) {
    ExpectClose(*gpu_top[t], *cpu_top[t], c.tolerance, StrCat("top ", t));
  }

  std::vector<bool> propagate_down = c.propagate_down;
  if (propagate_down.empty()) propagate_down.assign(c.bottoms.size(), true);
  bool any = false;
  for (bool down : propagate_down) any = any || down;
  if (!any) return;
  for (int t = 0; t < num_tops; ++t) {
    if (cpu_layer->loss(t) != 0.0f) continue;  // holds the loss weight
    Blob diff(cpu_top[t]->shape());
    FillGaussian(&diff, 2000 + static_cast<uint32_t>(t));
    Copy(diff.count(), diff.cpu_data(), cpu_top[t]->mutable_cpu_diff());
    Copy(diff.count(), diff.cpu_data(), gpu_top[t]->mutable_cpu_diff());
  }
  cpu_layer->Backward(cpu_top, propagate_down, cpu_bottom);
  gpu_layer->Backward(gpu_top, propagate_down, gpu_bottom);
  for (size_t i = 0; i < c.bottoms.size(); ++i) {
    if (!propagate_down[i]) continue;
    ExpectCloseDiff(*gpu_bottom[i], *cpu_bottom[i], c.tolerance, StrCat("bottom diff ", i));
  }

  if (!c.check_gradient) return;
  for (size_t i = 0; i < c.bottoms.size(); ++i) {
    if (!propagate_down[i]) continue;
    for (size_t j = 0; j < c.bottoms.size(); ++j) gpu_bottom[j]->CopyFrom(*cpu_bottom[j]);
    auto checked = MakeLayerOn(c.layer, Device::kGPU);
    GradientChecker checker(c.stepsize, c.threshold);
    checker.CheckGradient(checked.get(), gpu_bottom, gpu_top, static_cast<int>(i));
  }
}

// ---- Concat and Slice ----

TEST(GpuConcatTest, MatchesCpu) {
  ExpectGpuMatchesCpu(Case(R"(type: "Concat")", {{2, 3, 4, 5}, {2, 1, 4, 5}, {2, 13, 4, 5}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Concat" concat_param { axis: 0 })", {{1, 13}, {127, 13}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Concat" concat_param { axis: -1 })", {{3, 5, 7}, {3, 5, 1}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Concat" concat_param { concat_dim: 2 })",
                           {{2, 3, 1, 2}, {2, 3, 4, 2}}, {}, {true, false}));
  ExpectGpuMatchesCpu(Case(R"(type: "Concat")", {{13, 127}}));  // one bottom: shared
}

TEST(GpuSliceTest, MatchesCpu) {
  ExpectGpuMatchesCpuWithTops(
      Case(R"(type: "Slice" slice_param { slice_point: 1 slice_point: 5 })", {{2, 13, 3, 4}}), 3);
  ExpectGpuMatchesCpuWithTops(
      Case(R"(type: "Slice" slice_param { axis: 0 slice_point: 100 })", {{127, 6}}), 2);
  ExpectGpuMatchesCpuWithTops(Case(R"(type: "Slice" slice_param { axis: 0 })", {{6, 13}}), 3);
  ExpectGpuMatchesCpuWithTops(Case(R"(type: "Slice" slice_param { axis: -1 })", {{3, 5, 4}}), 2);
  ExpectGpuMatchesCpuWithTops(Case(R"(type: "Slice")", {{13, 127}}), 1);  // one top: shared
}

// ---- Tile, Crop, BatchReindex, Filter ----

TEST(GpuTileTest, MatchesCpu) {
  ExpectGpuMatchesCpu(Case(R"(type: "Tile" tile_param { tiles: 3 })", {{2, 3, 4, 5}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Tile" tile_param { axis: 0 tiles: 7 })", {{13}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Tile" tile_param { tiles: 2 })", {{1, 127}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Tile" tile_param { axis: -1 tiles: 1 })", {{3, 5}}));
}

TEST(GpuCropTest, MatchesCpu) {
  ExpectGpuMatchesCpu(Case(R"(type: "Crop" crop_param { offset: 1 offset: 2 })",
                           {{2, 3, 5, 4}, {2, 3, 3, 2}}, {}, {true, false}));
  ExpectGpuMatchesCpu(Case(R"(type: "Crop" crop_param { axis: 1 offset: 3 offset: 4 })",
                           {{1, 13, 7}, {1, 5, 2}}, {}, {true, false}));
  ExpectGpuMatchesCpu(
      Case(R"(type: "Crop" crop_param { axis: 0 offset: 100 })", {{127}, {13}}, {}, {true, false}));
  // One offset for every axis; the reference gets its (zero) gradient too.
  ExpectGpuMatchesCpu(
      Case(R"(type: "Crop" crop_param { axis: 0 offset: 1 })", {{3, 4, 5, 6}, {2, 2, 3, 4}}));
}

TEST(GpuBatchReindexTest, MatchesCpu) {
  auto fill_with = [](std::vector<float> indices) {
    return [indices](int index, Blob* blob) {
      if (index == 0) {
        FillGaussian(blob, 1000);
      } else {
        FillValues(blob, indices);
      }
    };
  };
  // Repeats, and items 1 and 3 never gathered (their gradient is zero).
  ExpectGpuMatchesCpu(Case(R"(type: "BatchReindex")", {{5, 3, 2}, {7}},
                           fill_with({4, 0, 4, 2, 2, 4, 0}), {true, false}));
  ExpectGpuMatchesCpu(
      Case(R"(type: "BatchReindex")", {{13, 127}, {1}}, fill_with({12}), {true, false}));
  ExpectGpuMatchesCpu(
      Case(R"(type: "BatchReindex")", {{3}, {4}}, fill_with({2, 2, 0, 2}), {true, false}));
}

TEST(GpuFilterTest, MatchesCpu) {
  auto fill_with = [](std::vector<float> selector) {
    return [selector](int index, Blob* blob) {
      if (index == 0) {
        FillGaussian(blob, 1000);
      } else {
        FillValues(blob, selector);
      }
    };
  };
  ExpectGpuMatchesCpu(
      Case(R"(type: "Filter")", {{6, 3, 2}, {6}}, fill_with({1, 0, 0, 2, 0, 1}), {true, false}));
  ExpectGpuMatchesCpu(
      Case(R"(type: "Filter")", {{6}, {6, 1}}, fill_with({0, 1, 1, 0, 0, -1}), {true, false}));
  ExpectGpuMatchesCpu(  // nothing selected: empty tops, zero gradient
      {R"(type: "Filter")", {{4, 13}, {4}}, fill_with({0, 0, 0, 0}), {true, false}});
  // Two data bottoms, two tops.
  ExpectGpuMatchesCpuWithTops(Case(R"(type: "Filter")", {{5, 3}, {5, 2, 2}, {5}},
                                   [](int index, Blob* blob) {
                                     if (index < 2) {
                                       FillGaussian(blob, 1000 + static_cast<uint32_t>(index));
                                     } else {
                                       FillValues(blob, {0, 1, 0, 1, 1});
                                     }
                                   },
                                   {true, true, false}),
                              2);
}

// ---- Embed ----

TEST(GpuEmbedTest, MatchesCpu) {
  // Repeated indices accumulate into one row of W. The GPU's param gradients
  // are compared with the CPU's, whose gradient test_embed_layer checks; the
  // shared checker would also perturb the (non-differentiable) indices.
  auto indices = [](int classes) {
    return [classes](int, Blob* blob) { FillLabels(blob, classes, 5); };
  };
  GpuCase with_bias = Case(R"(type: "Embed" embed_param { num_output: 5 input_dim: 7
      weight_filler { type: "gaussian" std: 1 } bias_filler { type: "gaussian" std: 1 } })",
                           {{13}}, indices(7), {false});
  with_bias.check_gradient = false;
  ExpectGpuMatchesCpu(with_bias);
  GpuCase no_bias =
      Case(R"(type: "Embed" embed_param { num_output: 127 input_dim: 3 bias_term: false
      weight_filler { type: "gaussian" std: 1 } })",
           {{2, 3}}, indices(3), {false});
  no_bias.check_gradient = false;
  ExpectGpuMatchesCpu(no_bias);
}

// ---- Reduction, Softmax, MVN ----

TEST(GpuReductionTest, MatchesCpu) {
  for (const char* op : {"SUM", "ASUM", "SUMSQ", "MEAN"}) {
    SCOPED_TRACE(op);
    const std::string param = StrCat("type: \"Reduction\" reduction_param { operation: ", op);
    auto away = [](int, Blob* blob) { FillAwayFromZero(blob, 1000); };
    ExpectGpuMatchesCpu(Case(param + " }", {{2, 3, 4, 5}}, away));
    ExpectGpuMatchesCpu(Case(param + " axis: 1 coeff: -0.5 }", {{13, 127}}, away));
    ExpectGpuMatchesCpu(Case(param + " axis: -1 coeff: 2 }", {{3, 1, 13}}, away));
    ExpectGpuMatchesCpu(Case(param + " axis: 0 }", {{127}}, away));
  }
}

TEST(GpuSoftmaxTest, MatchesCpu) {
  ExpectGpuMatchesCpu(Case(R"(type: "Softmax")", {{13, 7}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Softmax")", {{2, 3, 4, 5}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Softmax" softmax_param { axis: -1 })", {{2, 5, 13}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Softmax" softmax_param { axis: 0 })", {{127}}));
  ExpectGpuMatchesCpu(Case(R"(type: "Softmax")", {{1, 1}}));
}

TEST(GpuMVNTest, MatchesCpu) {
  ExpectGpuMatchesCpu(Case(R"(type: "MVN")", {{2, 3, 4, 5}}));
  ExpectGpuMatchesCpu(Case(R"(type: "MVN" mvn_param { across_channels: true })", {{2, 3, 4, 5}}));
  ExpectGpuMatchesCpu(
      Case(R"(type: "MVN" mvn_param { normalize_variance: false })", {{2, 3, 4, 5}}));
  ExpectGpuMatchesCpu(Case(R"(type: "MVN" mvn_param { across_channels: true })", {{13, 127}}));
  ExpectGpuMatchesCpu(Case(R"(type: "MVN")", {{1, 13, 7}}));
}

// ---- Accuracy ----

TEST(GpuAccuracyTest, MatchesCpu) {
  auto accuracy = [](const std::string& text, std::vector<std::vector<int64_t>> bottoms,
                     int classes, int ignore_every = 0, float ignore_value = -1.0f) {
    GpuCase c = Case(text, std::move(bottoms),
                     DataThenLabels(1, classes, ignore_every, ignore_value), {false, false});
    c.check_gradient = false;
    return c;
  };
  ExpectGpuMatchesCpu(accuracy(R"(type: "Accuracy")", {{13, 5}, {13}}, 5));
  ExpectGpuMatchesCpu(
      accuracy(R"(type: "Accuracy" accuracy_param { top_k: 3 })", {{13, 5}, {13}}, 5));
  ExpectGpuMatchesCpu(accuracy(R"(type: "Accuracy" accuracy_param { ignore_label: 2 })",
                               {{2, 3, 4, 5}, {2, 4, 5}}, 3, 4, 2.0f));
  ExpectGpuMatchesCpu(
      accuracy(R"(type: "Accuracy" accuracy_param { axis: -1 top_k: 2 })", {{3, 4, 7}, {3, 4}}, 7));
  ExpectGpuMatchesCpuWithTops(accuracy(R"(type: "Accuracy" accuracy_param { ignore_label: -1 })",
                                       {{127, 13}, {127}}, 13, 5),
                              2);
  // Counted on the device in runs over several blocks (65536 positions: 8
  // runs for the whole and for each class), per class too; a single
  // position with its classes (the channels-last reduction); no position.
  ExpectGpuMatchesCpuWithTops(
      accuracy(R"(type: "Accuracy" accuracy_param { top_k: 2 ignore_label: 4 })",
               {{4, 10, 128, 128}, {4, 128, 128}}, 10, 7, 4.0f),
      2);
  ExpectGpuMatchesCpuWithTops(accuracy(R"(type: "Accuracy")", {{1, 6}, {1}}, 6), 2);
  ExpectGpuMatchesCpuWithTops(accuracy(R"(type: "Accuracy")", {{0, 6}, {0}}, 6), 2);
}

TEST(GpuAccuracyTest, BadLabelFailsAsOnCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  Blob scores({2, 3}), labels({2});
  FillGaussian(&scores, 1);
  FillValues(&labels, {1, 3});
  Blob accuracy;
  std::vector<Blob*> bottom{&scores, &labels}, top{&accuracy};
  auto layer = MakeLayerOn(R"(name: "acc" type: "Accuracy")", Device::kGPU);
  layer->SetUp(bottom, top);
  try {
    layer->Forward(bottom, top);
    FAIL() << "a label outside [0, 3) was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("label 3 at index 1"), std::string::npos)
        << error.what();
  }
  // Checked on the device: the first bad position is named, whatever
  // thread found it first; and the layer runs on once it was raised.
  Blob more_scores({4, 3}), more_labels({4});
  FillGaussian(&more_scores, 2);
  FillValues(&more_labels, {1, 9, -4, 2});
  std::vector<Blob*> more{&more_scores, &more_labels};
  layer->Reshape(more, top);
  ExpectErrorContaining([&] { layer->Forward(more, top); },
                        {"label 9 at index 1", "scores 4 3 (12)"});
  // A NaN label is no class on the device either (it would convert to 0);
  // a label past 32 bits is named by its clamp.
  FillValues(&more_labels, {1, 0, std::numeric_limits<float>::quiet_NaN(), 2});
  ExpectErrorContaining([&] { layer->Forward(more, top); }, {"label -2147483648 at index 2"});
  FillValues(&more_labels, {1, 0, 2, 2});
  EXPECT_NO_THROW(layer->Forward(more, top));
  Blob cpu_accuracy;
  std::vector<Blob*> cpu_top{&cpu_accuracy};
  auto cpu_layer = MakeLayerOn(R"(name: "acc" type: "Accuracy")", Device::kCPU);
  cpu_layer->SetUp(more, cpu_top);
  cpu_layer->Forward(more, cpu_top);
  EXPECT_EQ(accuracy.cpu_data()[0], cpu_accuracy.cpu_data()[0]);
}

// ---- Loss layers ----

TEST(GpuEuclideanLossTest, MatchesCpu) {
  ExpectGpuMatchesCpu(Case(R"(type: "EuclideanLoss")", {{13, 3}, {13, 3}}));
  ExpectGpuMatchesCpu(Case(R"(type: "EuclideanLoss" loss_weight: 0.5)", {{2, 3, 4, 5}, {2, 60}}));
  ExpectGpuMatchesCpu(Case(R"(type: "EuclideanLoss")", {{1, 127}, {1, 127}}, {}, {false, true}));
}

TEST(GpuContrastiveLossTest, MatchesCpu) {
  auto contrastive = [](const std::string& text, int64_t num, int64_t dim, bool check = true) {
    GpuCase c =
        Case(text, {{num, dim}, {num, dim}, {num}}, DataThenLabels(2, 2), {true, true, false});
    c.check_gradient = check;
    return c;
  };
  // Margins past every distance keep the loss smooth for the gradient check.
  ExpectGpuMatchesCpuWithTops(
      contrastive(R"(type: "ContrastiveLoss" contrastive_loss_param { margin: 10 })", 13, 5), 1);
  ExpectGpuMatchesCpuWithTops(contrastive(R"(type: "ContrastiveLoss" loss_weight: 0.5
      contrastive_loss_param { margin: 40 legacy_version: true })",
                                          13, 5),
                              1);
  ExpectGpuMatchesCpuWithTops(
      contrastive(R"(type: "ContrastiveLoss" contrastive_loss_param { margin: 30 })", 1, 127), 1);
  // The default margin: most dissimilar pairs lie outside it (zero gradient).
  ExpectGpuMatchesCpuWithTops(contrastive(R"(type: "ContrastiveLoss")", 13, 3, false), 1);
}

TEST(GpuSigmoidCrossEntropyLossTest, MatchesCpu) {
  auto targets = [](int ignore_every) {
    return [ignore_every](int index, Blob* blob) {
      if (index == 0) {
        FillGaussian(blob, 1000, 2.0f);
        return;
      }
      FillUniform(blob, 1001, 0.0f, 1.0f);
      float* t = blob->mutable_cpu_data();
      for (int64_t k = 1; ignore_every > 0 && k < blob->count(); k += ignore_every) t[k] = -1;
    };
  };
  const std::string type = R"(type: "SigmoidCrossEntropyLoss" )";
  ExpectGpuMatchesCpu(Case(type, {{13, 3}, {13, 3}}, targets(0), {true, false}));
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    ExpectGpuMatchesCpu(
        Case(type + StrCat("loss_param { ignore_label: -1 normalization: ", mode, " }"),
             {{2, 3, 4, 5}, {2, 3, 4, 5}}, targets(3), {true, false}));
  }
  ExpectGpuMatchesCpu(Case(type + "loss_weight: 2 loss_param { normalize: true }",
                           {{1, 127}, {1, 127}}, targets(0), {true, false}));
}

TEST(GpuSoftmaxWithLossTest, MatchesCpu) {
  const std::string type = R"(type: "SoftmaxWithLoss" )";
  ExpectGpuMatchesCpu(Case(type, {{13, 5}, {13}}, DataThenLabels(1, 5), {true, false}));
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    ExpectGpuMatchesCpu(
        Case(type + StrCat("loss_param { ignore_label: 255 normalization: ", mode, " }"),
             {{2, 3, 4, 5}, {2, 4, 5}}, DataThenLabels(1, 3, 3, 255.0f), {true, false}));
  }
  ExpectGpuMatchesCpu(Case(type + "loss_param { ignore_label: 1 }", {{2, 3, 4, 5}, {2, 1, 4, 5}},
                           DataThenLabels(1, 3), {true, false}));
  ExpectGpuMatchesCpu(Case(type +
                               "softmax_param { axis: -1 } loss_weight: 2 loss_param { normalize: "
                               "false }",
                           {{3, 4, 7}, {3, 4}}, DataThenLabels(1, 7), {true, false}));
  ExpectGpuMatchesCpu(Case(type, {{1, 127}, {1}}, DataThenLabels(1, 127), {true, false}));
  // With the probabilities as a second top (its gradient is not propagated,
  // so no finite-difference check of the pair).
  GpuCase two_tops = Case(type + "loss_weight: 1 loss_weight: 0", {{13, 5}, {13}},
                          DataThenLabels(1, 5), {true, false});
  two_tops.check_gradient = false;
  ExpectGpuMatchesCpuWithTops(two_tops, 2);
}

TEST(GpuSoftmaxWithLossTest, BadLabelFailsAsOnCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  Blob scores({2, 3}), labels({2});
  FillGaussian(&scores, 1);
  FillValues(&labels, {-2, 1});
  Blob loss;
  std::vector<Blob*> bottom{&scores, &labels}, top{&loss};
  auto layer = MakeLayerOn(R"(name: "loss" type: "SoftmaxWithLoss")", Device::kGPU);
  layer->SetUp(bottom, top);
  try {
    layer->Forward(bottom, top);
    FAIL() << "a label outside [0, 3) was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("label -2 at index 0"), std::string::npos)
        << error.what();
  }
  // Checked on the device: the first bad position is named, whatever
  // thread found it first; and the layer runs on once it was raised.
  Blob more_scores({4, 3}), more_labels({4});
  FillGaussian(&more_scores, 2);
  FillValues(&more_labels, {1, 9, -4, 2});
  std::vector<Blob*> more{&more_scores, &more_labels};
  layer->Reshape(more, top);
  ExpectErrorContaining([&] { layer->Forward(more, top); }, {"label 9 at index 1"});
  FillValues(&more_labels, {1, std::numeric_limits<float>::quiet_NaN(), 2, 2});
  ExpectErrorContaining([&] { layer->Forward(more, top); }, {"label -2147483648 at index 1"});
  FillValues(&more_labels, {1, 0, 2, 2});
  EXPECT_GT(layer->Forward(more, top), 0.0f);
}

TEST(GpuSoftmaxWithLossTest, NaNScoresGiveANaNLossAsOnCpu) {
  // So that the solver's check of the loss stops the run (fmaxf would have
  // turned a NaN probability into FLT_MIN's finite loss).
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  for (Device device : {Device::kCPU, Device::kGPU}) {
    Blob scores({2, 3}), labels({2}), loss;
    FillValues(&scores, {0.5f, std::nanf(""), 1, 2, 3, 4});
    FillValues(&labels, {0, 1});
    std::vector<Blob*> bottom{&scores, &labels}, top{&loss};
    auto layer = MakeLayerOn(R"(name: "loss" type: "SoftmaxWithLoss")", device);
    layer->SetUp(bottom, top);
    EXPECT_TRUE(std::isnan(layer->Forward(bottom, top)))
        << (device == Device::kGPU ? "GPU" : "CPU");
  }
}

// ---- Data ----

TEST(GpuDataLayerTest, CopiesTheSameBatchesAsTheCpu) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  TempDir dir;
  std::vector<Datum> datums;
  for (int i = 0; i < 5; ++i) {
    std::vector<uint8_t> pixels;
    for (int p = 0; p < 12; ++p) pixels.push_back(static_cast<uint8_t>(10 * i + p));
    datums.push_back(RawDatum(1, 3, 4, pixels, i));
  }
  WriteDatumDB(dir / "db", datums);
  const std::string text = StrCat(
      "name: 'd' type: 'Data' phase: TRAIN transform_param { mirror: true scale: 0.5 } "
      "data_param { source: '",
      dir / "db", "' backend: LMDB batch_size: 3 }");
  Blob cpu_data, cpu_label, gpu_data, gpu_label;
  std::vector<Blob*> cpu_top{&cpu_data, &cpu_label}, gpu_top{&gpu_data, &gpu_label};
  auto cpu_layer = MakeLayerOn(text, Device::kCPU);
  auto gpu_layer = MakeLayerOn(text, Device::kGPU);
  cpu_layer->SetUp({}, cpu_top);
  gpu_layer->SetUp({}, gpu_top);
  for (int batch = 0; batch < 3; ++batch) {
    SCOPED_TRACE(batch);
    cpu_layer->Forward({}, cpu_top);
    gpu_layer->Forward({}, gpu_top);
    EXPECT_EQ(DataOf(gpu_data), DataOf(cpu_data));
    EXPECT_EQ(DataOf(gpu_label), DataOf(cpu_label));
  }
}

}  // namespace
}  // namespace demi
