#include <gtest/gtest.h>

#include <cmath>

#include "demi/layers/eltwise_layer.hpp"
#include "demi/net.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class EltwiseLayerTest : public ::testing::Test {
 protected:
  EltwiseLayerTest() : a_({2, 2}), b_({2, 2}), c_({2, 2}) {
    FillValues(&a_, {1, -2, 3, 0.5});
    FillValues(&b_, {2, 5, -1, 0.5});
    FillValues(&c_, {-3, 1, 4, 0.5});
  }
  /// Runs Backward with dy = (10, 20, 30, 40) on every bottom.
  void BackwardWithKnownDiff(Layer* layer) {
    FillValues(&top_, {10, 20, 30, 40});  // Forward rewrites the top below
    std::copy(top_.cpu_data(), top_.cpu_data() + 4, top_.mutable_cpu_diff());
    layer->Forward(bottom_vec_, top_vec_);
    layer->Backward(top_vec_, {true, true, true}, bottom_vec_);
  }
  Blob a_, b_, c_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&a_, &b_, &c_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(EltwiseLayerTest, SumWithAndWithoutCoefficientsByHand) {
  auto plain = MakeLayer(R"(type: "Eltwise")");
  plain->SetUp(bottom_vec_, top_vec_);
  plain->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(DataOf(top_), (std::vector<float>{0, 4, 6, 1.5}));

  auto weighted = MakeLayer(R"(type: "Eltwise" eltwise_param {
      operation: SUM coeff: 1 coeff: -1 coeff: 0.5 })");
  weighted->SetUp(bottom_vec_, top_vec_);
  weighted->Forward(bottom_vec_, top_vec_);
  // a - b + c / 2
  EXPECT_EQ(DataOf(top_), (std::vector<float>{-2.5, -6.5, 6, 0.25}));
  BackwardWithKnownDiff(weighted.get());
  EXPECT_EQ(DiffOf(a_), (std::vector<float>{10, 20, 30, 40}));
  EXPECT_EQ(DiffOf(b_), (std::vector<float>{-10, -20, -30, -40}));
  EXPECT_EQ(DiffOf(c_), (std::vector<float>{5, 10, 15, 20}));
}

TEST_F(EltwiseLayerTest, ProdByHand) {
  for (const char* text : {R"(type: "Eltwise" eltwise_param { operation: PROD })",
                           R"(type: "Eltwise" eltwise_param {
                                operation: PROD stable_prod_grad: false })"}) {
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    EXPECT_EQ(DataOf(top_), (std::vector<float>{-6, -10, -12, 0.125}));
    BackwardWithKnownDiff(layer.get());
    // dx_k = dy * (product of the other two)
    EXPECT_EQ(DiffOf(a_), (std::vector<float>{-60, 100, -120, 10})) << text;
    EXPECT_EQ(DiffOf(b_), (std::vector<float>{-30, -40, 360, 10})) << text;
    EXPECT_EQ(DiffOf(c_), (std::vector<float>{20, -200, -90, 10})) << text;
  }
}

TEST_F(EltwiseLayerTest, StableProdGradHandlesAZeroInput) {
  FillValues(&a_, {0, 2, 1, 1});
  auto layer = MakeLayer(R"(type: "Eltwise" eltwise_param { operation: PROD })");
  layer->SetUp(bottom_vec_, top_vec_);
  BackwardWithKnownDiff(layer.get());
  // da[0] = 10 * b[0] * c[0] = 10 * 2 * -3, although the product y[0] is 0.
  EXPECT_EQ(DiffOf(a_)[0], -60.0f);
  EXPECT_EQ(DiffOf(b_)[0], 0.0f);
}

TEST_F(EltwiseLayerTest, MaxKeepsTheWinnerByHand) {
  auto layer = MakeLayer(R"(type: "Eltwise" eltwise_param { operation: MAX })");
  layer->SetUp(bottom_vec_, top_vec_);
  layer->Forward(bottom_vec_, top_vec_);
  EXPECT_EQ(DataOf(top_), (std::vector<float>{2, 5, 4, 0.5}));
  BackwardWithKnownDiff(layer.get());
  // Winners: b, b, c, and b for the three-way tie (Caffe: b beats an equal a,
  // a later bottom must be strictly larger).
  EXPECT_EQ(DiffOf(a_), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(DiffOf(b_), (std::vector<float>{10, 20, 0, 40}));
  EXPECT_EQ(DiffOf(c_), (std::vector<float>{0, 0, 30, 0}));
}

TEST_F(EltwiseLayerTest, BuffersAndBackwardReadsFollowTheOperation) {
  auto sum = MakeLayer(R"(type: "Eltwise")");
  sum->SetUp(bottom_vec_, top_vec_);
  // The DNNL engine's sum primitive may ask for a scratchpad (empty here).
  ASSERT_EQ(sum->buffers().size(), 1u);
  EXPECT_EQ(sum->buffers()[0].name, "dnnl_scratchpad");
  EXPECT_EQ(sum->buffers()[0].lifetime, BufferLifetime::kScratch);
  EXPECT_FALSE(sum->BackwardReadsBottomData(0));
  EXPECT_FALSE(sum->BackwardReadsTopData(0));

  auto max = MakeLayer(R"(type: "Eltwise" eltwise_param { operation: MAX })");
  max->SetUp(bottom_vec_, top_vec_);
  ASSERT_EQ(max->buffers().size(), 1u);
  EXPECT_EQ(max->buffers()[0].name, "argmax");
  EXPECT_EQ(max->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(max->buffers()[0].blob->shape(), a_.shape());
  EXPECT_FALSE(max->BackwardReadsBottomData(1));
  EXPECT_FALSE(max->BackwardReadsTopData(0));

  auto prod = MakeLayer(R"(type: "Eltwise" eltwise_param { operation: PROD })");
  prod->SetUp(bottom_vec_, top_vec_);
  EXPECT_TRUE(prod->buffers().empty());
  EXPECT_TRUE(prod->BackwardReadsBottomData(0));
  EXPECT_TRUE(prod->BackwardReadsBottomData(2));
  EXPECT_FALSE(prod->BackwardReadsTopData(0));
  auto ratio = MakeLayer(R"(type: "Eltwise" eltwise_param {
      operation: PROD stable_prod_grad: false })");
  EXPECT_TRUE(ratio->BackwardReadsBottomData(1));
  EXPECT_TRUE(ratio->BackwardReadsTopData(0));
}

class EltwiseGradientTest : public ::testing::Test {
 protected:
  EltwiseGradientTest() : x_({2, 3, 2, 3}), y_({2, 3, 2, 3}), z_({2, 3, 2, 3}) {
    FillGaussian(&x_, 61);
    FillGaussian(&y_, 62);
    FillGaussian(&z_, 63);
  }
  void Check(const char* text, float threshold = 1e-3f) {
    auto layer = MakeLayer(text);
    GradientChecker checker(1e-3f, threshold);
    checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
  }
  Blob x_, y_, z_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&x_, &y_, &z_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(EltwiseGradientTest, Sum) {
  Check(R"(type: "Eltwise")");
  Check(R"(type: "Eltwise" eltwise_param { coeff: 1 coeff: -0.5 coeff: 2 })");
}

TEST_F(EltwiseGradientTest, Prod) {
  Check(R"(type: "Eltwise" eltwise_param { operation: PROD })", 1e-2f);
  // Without stable_prod_grad, y / x_k: keep the inputs away from zero.
  FillUniform(&x_, 64, 0.5f, 1.5f);
  FillUniform(&y_, 65, -1.5f, -0.5f);
  FillUniform(&z_, 66, 0.5f, 1.5f);
  Check(R"(type: "Eltwise" eltwise_param { operation: PROD stable_prod_grad: false })", 1e-2f);
}

TEST_F(EltwiseGradientTest, Max) {
  // Levels at least 0.5 apart (3k mod 5 differs for k = 0, 1, 2) plus small
  // noise: no ties within the finite-difference step, and each bottom wins
  // somewhere.
  std::vector<Blob*> blobs = bottom_vec_;
  for (size_t k = 0; k < blobs.size(); ++k) {
    float* data = blobs[k]->mutable_cpu_data();
    for (int64_t i = 0; i < blobs[k]->count(); ++i) {
      data[i] = 0.05f * data[i] + 0.5f * static_cast<float>((i * 7 + k * 3) % 5);
    }
  }
  Check(R"(type: "Eltwise" eltwise_param { operation: MAX })");
}

TEST_F(EltwiseGradientTest, TwoBottomsOddShape) {
  Blob p({1, 13}), q({1, 13});
  FillGaussian(&p, 67);
  FillGaussian(&q, 68);
  bottom_vec_ = {&p, &q};
  Check(R"(type: "Eltwise" eltwise_param { coeff: 3 coeff: -1 })");
  Check(R"(type: "Eltwise" eltwise_param { operation: PROD })");
}

TEST_F(EltwiseLayerTest, Errors) {
  auto prod_coeff = MakeLayer(R"(name: "e" type: "Eltwise" eltwise_param {
      operation: PROD coeff: 1 coeff: 1 coeff: 1 })");
  ExpectErrorContaining([&] { prod_coeff->SetUp(bottom_vec_, top_vec_); },
                        {"Eltwise layer 'e'", "coeff only for operation SUM"});
  auto count = MakeLayer(R"(name: "e" type: "Eltwise" eltwise_param { coeff: 1 coeff: 2 })");
  ExpectErrorContaining([&] { count->SetUp(bottom_vec_, top_vec_); },
                        {"'e'", "2 coeff values for 3 bottoms"});
  Blob wrong({4, 1});
  std::vector<Blob*> mismatch{&a_, &b_, &wrong};
  auto layer = MakeLayer(R"(name: "e" type: "Eltwise")");
  ExpectErrorContaining(
      [&] { layer->SetUp(mismatch, top_vec_); },
      {"Eltwise layer 'e'", "bottom 2 has shape 4 1 (4)", "bottom 0 has 2 2 (4)"});
  std::vector<Blob*> in_place{&a_};
  ExpectErrorContaining([&] { layer->SetUp(bottom_vec_, in_place); },
                        {"Eltwise layer 'e'", "in place"});
}

// A planned net reuses memory by the layers' declarations of what Backward
// reads: with Eltwise of each kind, Concat, Slice, Flatten and Reshape in one
// net, training must match the unplanned net bit for bit.
const char* kBranchyNet = R"(
  name: "branchy"
  layer { name: "data" type: "DummyData" top: "x"
          dummy_data_param { shape { dim: 4 dim: 3 dim: 2 dim: 2 } data_filler { type: "gaussian" } } }
  layer { name: "flat" type: "Flatten" bottom: "x" top: "xf" }
  layer { name: "ip1" type: "InnerProduct" bottom: "xf" top: "h1"
          inner_product_param { num_output: 12 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "ip2" type: "InnerProduct" bottom: "xf" top: "h2"
          inner_product_param { num_output: 12 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "ip3" type: "InnerProduct" bottom: "xf" top: "h3"
          inner_product_param { num_output: 12 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "sum" type: "Eltwise" bottom: "h1" bottom: "h2" top: "s"
          eltwise_param { coeff: 1 coeff: -0.5 } }
  layer { name: "prod" type: "Eltwise" bottom: "h2" bottom: "h3" top: "p"
          eltwise_param { operation: PROD } }
  layer { name: "ratio" type: "Eltwise" bottom: "h1" bottom: "h3" top: "r"
          eltwise_param { operation: PROD stable_prod_grad: false } }
  layer { name: "max" type: "Eltwise" bottom: "s" bottom: "p" bottom: "r" top: "m"
          eltwise_param { operation: MAX } }
  layer { name: "cat" type: "Concat" bottom: "m" bottom: "s" top: "c" }
  layer { name: "cut" type: "Slice" bottom: "c" top: "c1" top: "c2"
          slice_param { slice_point: 5 } }
  layer { name: "shape" type: "Reshape" bottom: "c2" top: "c2r"
          reshape_param { shape { dim: 0 dim: -1 dim: 1 } } }
  layer { name: "flat2" type: "Flatten" bottom: "c2r" top: "c2f" }
  layer { name: "head1" type: "InnerProduct" bottom: "c1" top: "o1" loss_weight: 1
          inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "head2" type: "InnerProduct" bottom: "c2f" top: "o2" loss_weight: 0.5
          inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 0.3 } } }
)";

std::vector<float> TrainBranchy(MemoryOptimization strategy, std::vector<float>* params) {
  NetParameter param = ParseText<NetParameter>(kBranchyNet);
  param.set_memory_optimization(strategy);
  param.mutable_state()->set_phase(TRAIN);
  Net net(param, Context());
  std::vector<float> losses;
  for (int step = 0; step < 4; ++step) {
    net.ClearParamDiffs();
    losses.push_back(net.ForwardBackward());
    for (Blob* blob : net.learnable_params()) blob->scale_diff(0.05f);
    net.Update();
  }
  for (Blob* blob : net.learnable_params()) {
    const std::vector<float> values = DataOf(*blob);
    params->insert(params->end(), values.begin(), values.end());
  }
  return losses;
}

TEST(EltwiseNetTest, PlannedNetTrainsBitIdenticalToUnplanned) {
  std::vector<float> none_params, arena_params;
  const std::vector<float> expected = TrainBranchy(NONE, &none_params);
  EXPECT_EQ(TrainBranchy(ARENA, &arena_params), expected);
  EXPECT_EQ(arena_params, none_params);
  for (float loss : expected) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NE(expected.front(), expected.back());  // the params did learn
}

}  // namespace
}  // namespace demi
