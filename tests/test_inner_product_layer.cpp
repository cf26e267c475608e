#include <gtest/gtest.h>

#include "demi/layers/inner_product_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class InnerProductLayerTest : public ::testing::Test {
 protected:
  InnerProductLayerTest() : bottom_({2, 3, 2, 1}) { FillGaussian(&bottom_, 11); }
  Blob bottom_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&bottom_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(InnerProductLayerTest, ShapesFollowAxis) {
  auto layer = MakeLayer(R"(type: "InnerProduct" inner_product_param { num_output: 4 })");
  layer->SetUp(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(layer->blobs()[1]->shape(), (std::vector<int64_t>{4}));

  auto axis2 = MakeLayer(R"(type: "InnerProduct" inner_product_param { num_output: 5 axis: 2 })");
  axis2->SetUp(bottom_vec_, top_vec_);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 3, 5}));
}

TEST_F(InnerProductLayerTest, ForwardMatchesHandComputed) {
  Blob x({2, 3});
  FillValues(&x, {1, 2, 3, -1, 0, 2});
  std::vector<Blob*> bottom{&x};
  auto layer = MakeLayer(R"(type: "InnerProduct" inner_product_param { num_output: 2 })");
  layer->SetUp(bottom, top_vec_);
  FillValues(layer->blobs()[0].get(), {1, 0, -1, 0.5, 2, 1});
  FillValues(layer->blobs()[1].get(), {0.5, -1});
  layer->Forward(bottom, top_vec_);
  // row 0: [1 2 3].[1 0 -1] + .5 = -1.5 ; [1 2 3].[.5 2 1] - 1 = 6.5
  // row 1: [-1 0 2].[1 0 -1] + .5 = -2.5 ; [-1 0 2].[.5 2 1] - 1 = 0.5
  EXPECT_EQ(DataOf(top_), (std::vector<float>{-1.5f, 6.5f, -2.5f, 0.5f}));
}

TEST_F(InnerProductLayerTest, TransposeGivesSameResultWithTransposedWeights) {
  auto plain = MakeLayer(R"(type: "InnerProduct" inner_product_param {
      num_output: 3 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })");
  auto trans = MakeLayer(R"(type: "InnerProduct" inner_product_param {
      num_output: 3 transpose: true })");
  Blob top2;
  std::vector<Blob*> top2_vec{&top2};
  plain->SetUp(bottom_vec_, top_vec_);
  trans->SetUp(bottom_vec_, top2_vec);
  ASSERT_EQ(trans->blobs()[0]->shape(), (std::vector<int64_t>{6, 3}));
  for (int n = 0; n < 3; ++n) {
    for (int k = 0; k < 6; ++k) {
      trans->blobs()[0]->mutable_cpu_data()[k * 3 + n] = plain->blobs()[0]->cpu_data()[n * 6 + k];
    }
  }
  trans->blobs()[1]->CopyFrom(*plain->blobs()[1]);
  plain->Forward(bottom_vec_, top_vec_);
  trans->Forward(bottom_vec_, top2_vec);
  for (int i = 0; i < top_.count(); ++i) EXPECT_NEAR(top_.cpu_data()[i], top2.cpu_data()[i], 1e-5);
}

TEST_F(InnerProductLayerTest, Gradient) {
  auto layer = MakeLayer(R"(type: "InnerProduct" inner_product_param {
      num_output: 3 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(InnerProductLayerTest, GradientTransposeAndOddShape) {
  Blob x({1, 13});
  FillGaussian(&x, 5);
  std::vector<Blob*> bottom{&x};
  auto layer = MakeLayer(R"(type: "InnerProduct" inner_product_param {
      num_output: 7 transpose: true weight_filler { type: "xavier" } })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom, top_vec_);
}

TEST_F(InnerProductLayerTest, WrongInputSizeAfterSetupIsAnError) {
  auto layer =
      MakeLayer(R"(name: "fc" type: "InnerProduct" inner_product_param { num_output: 2 })");
  layer->SetUp(bottom_vec_, top_vec_);
  bottom_.Reshape({2, 5});
  ExpectErrorContaining([&] { layer->Reshape(bottom_vec_, top_vec_); }, {"fc", "6 inputs"});
}

}  // namespace
}  // namespace demi
