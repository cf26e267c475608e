#include <gtest/gtest.h>

#include <limits>
#include <utility>

#include "demi/layers/filter_layer.hpp"
#include "demi/net.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

class FilterLayerTest : public ::testing::Test {
 protected:
  FilterLayerTest() : data_({4, 2}), labels_({4}), selector_({4}) {
    FillValues(&data_, {0, 1, 2, 3, 4, 5, 6, 7});
    FillValues(&labels_, {10, 11, 12, 13});
    FillValues(&selector_, {0, 1, 0, -2});
  }
  Blob data_;
  Blob labels_;
  Blob selector_;
  Blob top0_;
  Blob top1_;
  std::vector<Blob*> bottom_{&data_, &labels_, &selector_};
  std::vector<Blob*> top_{&top0_, &top1_};
};

TEST_F(FilterLayerTest, ForwardKeepsTheSelectedItems) {
  auto layer = MakeLayer(R"(type: "Filter")");
  layer->SetUp(bottom_, top_);
  // Reshape sizes the tops for every item; Forward shrinks them.
  EXPECT_EQ(top0_.shape(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(top1_.shape(), (std::vector<int64_t>{4}));
  layer->Forward(bottom_, top_);
  EXPECT_EQ(top0_.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(DataOf(top0_), (std::vector<float>{2, 3, 6, 7}));
  EXPECT_EQ(DataOf(top1_), (std::vector<float>{11, 13}));

  FillValues(&selector_, {1, 1, 1, 0});
  layer->Forward(bottom_, top_);
  EXPECT_EQ(DataOf(top0_), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  FillValues(&selector_, {0, 0, 0, 0});
  layer->Forward(bottom_, top_);
  EXPECT_EQ(top0_.shape(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(top1_.count(), 0);
}

TEST_F(FilterLayerTest, SelectorMayHaveTrailingUnitAxes) {
  Blob selector({4, 1, 1});
  FillValues(&selector, {1, 0, 0, 1});
  std::vector<Blob*> bottom{&data_, &selector};
  std::vector<Blob*> top{&top0_};
  auto layer = MakeLayer(R"(type: "Filter")");
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  EXPECT_EQ(DataOf(top0_), (std::vector<float>{0, 1, 6, 7}));
}

TEST_F(FilterLayerTest, BackwardScattersAndReadsNoData) {
  auto layer = MakeLayer(R"(name: "filter" type: "Filter")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(2));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  layer->SetUp(bottom_, top_);
  EXPECT_TRUE(layer->AllowForceBackward(0));
  EXPECT_TRUE(layer->AllowForceBackward(1));
  EXPECT_FALSE(layer->AllowForceBackward(2));
  layer->Forward(bottom_, top_);
  for (Blob* blob : {&data_, &labels_, &selector_, &top0_, &top1_}) {
    Set(blob->count(), kNaN, blob->mutable_cpu_data());
  }
  std::copy_n(std::vector<float>{1, 2, 3, 4}.begin(), 4, top0_.mutable_cpu_diff());
  std::copy_n(std::vector<float>{5, 6}.begin(), 2, top1_.mutable_cpu_diff());
  Set(data_.count(), 9.0f, data_.mutable_cpu_diff());
  Set(labels_.count(), 9.0f, labels_.mutable_cpu_diff());
  layer->Backward(top_, {true, false, false}, bottom_);
  EXPECT_EQ(DiffOf(data_), (std::vector<float>{0, 0, 1, 2, 0, 0, 3, 4}));
  EXPECT_EQ(DiffOf(labels_), (std::vector<float>{9, 9, 9, 9}));
  layer->Backward(top_, {false, true, false}, bottom_);
  EXPECT_EQ(DiffOf(labels_), (std::vector<float>{0, 5, 0, 6}));
  ExpectErrorContaining(
      [&] {
        layer->Backward(top_, {true, true, true}, bottom_);
      },
      {"Filter layer 'filter'", "cannot backpropagate to its selector"});
}

TEST_F(FilterLayerTest, Gradient) {
  struct Case {
    std::vector<int64_t> data;
    std::vector<float> selector;
  };
  for (const Case& c : std::vector<Case>{{{5, 3, 2}, {1, 0, 1, 1, 0}},
                                         {{13, 1}, {0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1}},
                                         {{1, 127}, {1}},
                                         {{3, 2, 1, 2}, {0, 0, 1}}}) {
    SCOPED_TRACE(ShapeString(c.data));
    Blob data(c.data);
    FillGaussian(&data, 341);
    std::vector<int64_t> other_shape{c.data[0], 2};
    Blob other(other_shape);
    FillGaussian(&other, 342);
    Blob selector({c.data[0]});
    FillValues(&selector, c.selector);
    Blob top0;
    Blob top1;
    std::vector<Blob*> bottom{&data, &other, &selector}, top{&top0, &top1};
    for (int checked : {0, 1}) {
      auto layer = MakeLayer(R"(type: "Filter")");
      GradientChecker checker(1e-2f, 1e-3f);
      checker.CheckGradient(layer.get(), bottom, top, checked);
    }
  }
}

TEST_F(FilterLayerTest, BadShapesAreErrors) {
  std::vector<Blob*> one_top{&top0_};
  auto tops = MakeLayer(R"(name: "filter" type: "Filter")");
  ExpectErrorContaining(
      [&] { tops->SetUp(bottom_, one_top); },
      {"Filter layer 'filter'", "one top per data bottom", "3 bottoms", "1 tops"});
  Blob selector({4, 2});
  std::vector<Blob*> bad_selector{&data_, &selector};
  auto layer = MakeLayer(R"(name: "filter" type: "Filter")");
  ExpectErrorContaining(
      [&] { layer->SetUp(bad_selector, one_top); },
      {"Filter layer 'filter'", "selector of shape (N) or (N, 1, ...)", "4 2 (8)"});
  Blob short_selector({3});
  std::vector<Blob*> mismatch{&data_, &short_selector};
  ExpectErrorContaining([&] { layer->SetUp(mismatch, one_top); },
                        {"Filter layer 'filter'", "bottom 0 of shape 4 2 (8)", "3 (3)",
                         "differ in their first axis"});
}

// In a net the layers after a Filter see its selection (the net reshapes
// them after its Forward): the loss and the weight gradient of a net fed the
// selected rows alone, pass after pass, with fewer rows than the last pass
// and then more, planned or not, and run a step per call (as debug_info
// runs it) or at once.
TEST(FilterNetTest, TheLayersAfterItSeeTheSelection) {
  const char* head = R"(
    layer { name: "ip" type: "InnerProduct" bottom: "fx" top: "ip"
            inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 1 } } }
    layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "flabel" top: "loss" })";
  const std::string filtered = StrCat(R"(
    force_backward: true
    layer { name: "in" type: "Input" top: "x" top: "label" top: "sel"
            input_param { shape { dim: 6 dim: 3 } shape { dim: 6 } shape { dim: 6 } } }
    layer { name: "filter" type: "Filter" bottom: "x" bottom: "label" bottom: "sel"
            top: "fx" top: "flabel" })",
                                      head);
  const std::string direct = StrCat(R"(
    layer { name: "in" type: "Input" top: "fx" top: "flabel"
            input_param { shape { dim: 6 dim: 3 } shape { dim: 6 } } })",
                                    head);
  for (const auto& [plan, stepwise] :
       {std::pair{ARENA, false}, std::pair{NONE, false}, std::pair{ARENA, true}}) {
    SCOPED_TRACE(StrCat(MemoryOptimization_Name(plan), stepwise ? ", a step per call" : ""));
    NetParameter param = ParseText<NetParameter>(filtered);
    param.set_memory_optimization(plan);
    param.mutable_state()->set_phase(TRAIN);
    Net net(param);
    NetParameter reference_param = ParseText<NetParameter>(direct);
    reference_param.mutable_state()->set_phase(TRAIN);
    Net reference(reference_param);
    reference.layer_by_name("ip")->blobs()[0]->CopyFrom(*net.layer_by_name("ip")->blobs()[0]);
    Blob& x = *net.input_blobs()[0];
    FillGaussian(&x, 17);
    FillValues(net.input_blobs()[1], {0, 1, 2, 2, 1, 0});
    for (const std::vector<float>& selector : std::vector<std::vector<float>>{
             {1, 0, 1, 1, 0, 1}, {0, 0, 1, 0, 0, 1}, {1, 1, 1, 0, 1, 1}}) {
      FillValues(net.input_blobs()[2], selector);
      std::vector<float> rows, labels;
      for (int i = 0; i < 6; ++i) {
        if (selector[i] == 0) continue;
        rows.insert(rows.end(), x.cpu_data() + 3 * i, x.cpu_data() + 3 * i + 3);
        labels.push_back(net.input_blobs()[1]->cpu_data()[i]);
      }
      const int64_t m = static_cast<int64_t>(labels.size());
      reference.input_blobs()[0]->Reshape({m, 3});
      reference.input_blobs()[1]->Reshape({m});
      reference.Reshape();
      FillValues(reference.input_blobs()[0], rows);
      FillValues(reference.input_blobs()[1], labels);
      for (Net* each : {&net, &reference}) {
        each->ClearParamDiffs();
        if (each == &net && stepwise) {
          for (int step = 0; step < static_cast<int>(net.layers().size()); ++step) {
            net.ForwardFromTo(step, step);
          }
        } else {
          each->Forward();
        }
        each->Backward();
      }
      EXPECT_EQ(net.blob_by_name("ip")->shape(0), m);
      EXPECT_FLOAT_EQ(net.blob_by_name("loss")->cpu_data()[0],
                      reference.blob_by_name("loss")->cpu_data()[0]);
      const Blob& dw = *net.layer_by_name("ip")->blobs()[0];
      const Blob& want = *reference.layer_by_name("ip")->blobs()[0];
      for (int64_t k = 0; k < dw.count(); ++k) {
        EXPECT_NEAR(dw.cpu_diff()[k], want.cpu_diff()[k], 1e-6) << k;
      }
    }
  }
}

}  // namespace
}  // namespace demi
