#include <gtest/gtest.h>

#include <limits>

#include "demi/layers/embed_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// input_dim 3, num_output 2; W = [[1, 2], [3, 4], [5, 6]], b = [0.5, -0.5].
class EmbedLayerTest : public ::testing::Test {
 protected:
  EmbedLayerTest() : x_({2, 2}) { FillValues(&x_, {2, 0, 1, 2}); }

  std::unique_ptr<Layer> SetUpLayer(const std::string& text) {
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_, top_);
    FillValues(layer->blobs()[0].get(), {1, 2, 3, 4, 5, 6});
    if (layer->blobs().size() > 1) FillValues(layer->blobs()[1].get(), {0.5f, -0.5f});
    return layer;
  }

  Blob x_;
  Blob y_;
  std::vector<Blob*> bottom_{&x_};
  std::vector<Blob*> top_{&y_};
};

TEST_F(EmbedLayerTest, ForwardLooksUpRows) {
  auto layer = SetUpLayer(R"(type: "Embed" embed_param { num_output: 2 input_dim: 3 })");
  ASSERT_EQ(layer->blobs().size(), 2u);
  EXPECT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(layer->blobs()[1]->shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(y_.shape(), (std::vector<int64_t>{2, 2, 2}));
  layer->Forward(bottom_, top_);
  EXPECT_EQ(DataOf(y_), (std::vector<float>{5.5f, 5.5f, 1.5f, 1.5f, 3.5f, 3.5f, 5.5f, 5.5f}));
  auto no_bias =
      SetUpLayer(R"(type: "Embed" embed_param { num_output: 2 input_dim: 3 bias_term: false })");
  ASSERT_EQ(no_bias->blobs().size(), 1u);
  no_bias->Forward(bottom_, top_);
  EXPECT_EQ(DataOf(y_), (std::vector<float>{5, 6, 1, 2, 3, 4, 5, 6}));
}

TEST_F(EmbedLayerTest, FillersInitializeTheParams) {
  auto layer = MakeLayer(R"(type: "Embed" embed_param { num_output: 2 input_dim: 3
      weight_filler { type: "constant" value: 0.5 } bias_filler { type: "constant" value: -2 } })");
  layer->SetUp(bottom_, top_);
  EXPECT_EQ(DataOf(*layer->blobs()[0]), std::vector<float>(6, 0.5f));
  EXPECT_EQ(DataOf(*layer->blobs()[1]), (std::vector<float>{-2, -2}));
}

TEST_F(EmbedLayerTest, BackwardAccumulatesIntoTheLookedUpRows) {
  auto layer = SetUpLayer(R"(type: "Embed" embed_param { num_output: 2 input_dim: 3 })");
  EXPECT_TRUE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_FALSE(layer->AllowForceBackward(0));
  layer->Forward(bottom_, top_);
  Set(y_.count(), std::numeric_limits<float>::quiet_NaN(), y_.mutable_cpu_data());
  for (int i = 0; i < 8; ++i) y_.mutable_cpu_diff()[i] = static_cast<float>(i + 1);
  Blob& w = *layer->blobs()[0];
  Blob& b = *layer->blobs()[1];
  Set(w.count(), 1.0f, w.mutable_cpu_diff());
  Set(b.count(), 1.0f, b.mutable_cpu_diff());
  layer->Backward(top_, {false}, bottom_);
  // Index 2 at positions 0 and 3, 0 at position 1, 1 at position 2.
  EXPECT_EQ(DiffOf(w), (std::vector<float>{4, 5, 6, 7, 9, 11}));
  EXPECT_EQ(DiffOf(b), (std::vector<float>{17, 21}));
  layer->set_param_propagate_down(0, false);
  layer->set_param_propagate_down(1, false);
  layer->Backward(top_, {false}, bottom_);
  EXPECT_EQ(DiffOf(w), (std::vector<float>{4, 5, 6, 7, 9, 11}));
  EXPECT_EQ(DiffOf(b), (std::vector<float>{17, 21}));
}

TEST_F(EmbedLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{13}, {2, 3}, {1}, {127}, {2, 1, 3}}) {
    for (const char* text : {R"(type: "Embed" embed_param { num_output: 3 input_dim: 5
                                 weight_filler { type: "gaussian" }
                                 bias_filler { type: "gaussian" } })",
                             R"(type: "Embed" embed_param { num_output: 1 input_dim: 13
                                 bias_term: false weight_filler { type: "gaussian" } })"}) {
      SCOPED_TRACE(ShapeString(shape) + text);
      Blob x(shape);
      const int64_t input_dim = ParseText<LayerParameter>(text).embed_param().input_dim();
      for (int64_t i = 0; i < x.count(); ++i) {
        x.mutable_cpu_data()[i] = static_cast<float>(i * 7 % input_dim);
      }
      Blob y;
      std::vector<Blob*> bottom{&x}, top{&y};
      auto layer = MakeLayer(text);
      GradientChecker checker(1e-2f, 1e-3f);
      checker.CheckGradient(layer.get(), bottom, top, /*check_bottom=*/1);  // params only
    }
  }
}

TEST_F(EmbedLayerTest, BadIndicesAreErrors) {
  auto layer =
      SetUpLayer(R"(name: "emb" type: "Embed" embed_param { num_output: 2 input_dim: 3 })");
  x_.mutable_cpu_data()[1] = 3;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                        {"Embed layer 'emb'", "input 3 at position 1", "2 2 (4)", "[0, 3)"});
  x_.mutable_cpu_data()[1] = -1;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); }, {"input -1 at position 1"});
  x_.mutable_cpu_data()[1] = 0;
  x_.mutable_cpu_data()[3] = 1.5f;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); }, {"input 1.5 at position 3"});
}

TEST_F(EmbedLayerTest, BadParamsAndBackwardToIndicesAreErrors) {
  auto unset = MakeLayer(R"(name: "emb" type: "Embed" embed_param { input_dim: 3 })");
  ExpectErrorContaining(
      [&] { unset->SetUp(bottom_, top_); },
      {"Embed layer 'emb'", "num_output > 0 and input_dim > 0", "num_output 0 and input_dim 3"});
  auto wrong = MakeLayer(R"(name: "emb" type: "Embed" embed_param { num_output: 2 input_dim: 3 }
                            blobs { shape { dim: 2 dim: 3 } data: [1, 2, 3, 4, 5, 6] })");
  ExpectErrorContaining([&] { wrong->SetUp(bottom_, top_); },
                        {"Embed layer 'emb'", "1 param blobs", "2 3 (6)", "W 3 2 (6) and b 2 (2)"});
  auto layer =
      SetUpLayer(R"(name: "emb" type: "Embed" embed_param { num_output: 2 input_dim: 3 })");
  layer->Forward(bottom_, top_);
  ExpectErrorContaining([&] { layer->Backward(top_, {true}, bottom_); },
                        {"Embed layer 'emb'", "cannot backpropagate to its input indices"});
}

}  // namespace
}  // namespace demi
