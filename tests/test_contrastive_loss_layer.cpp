#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "demi/layers/contrastive_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Three pairs: a - b = (-3, -4) (d = 5, similar), (0, -0.5) (d = 0.5,
/// dissimilar, inside margin 1) and (-1.2, -1.6) (d = 2, dissimilar, outside).
class ContrastiveLossLayerTest : public ::testing::Test {
 protected:
  ContrastiveLossLayerTest() : a_({3, 2}), b_({3, 2}), similar_({3}) {
    FillValues(&a_, {0, 0, 1, 1, 0, 0});
    FillValues(&b_, {3, 4, 1, 1.5f, 1.2f, 1.6f});
    FillValues(&similar_, {1, 0, 0});
  }
  Blob a_;
  Blob b_;
  Blob similar_;
  Blob loss_;
  std::vector<Blob*> bottom_{&a_, &b_, &similar_};
  std::vector<Blob*> top_{&loss_};
};

TEST_F(ContrastiveLossLayerTest, ForwardAndBackwardMatchHandComputedReadingNoData) {
  struct Case {
    const char* text;
    float loss;
    float coeff;  ///< of the dissimilar pair inside the margin
  };
  // loss = (25 + (1 - 0.5)^2) / 6, legacy (25 + (1 - 0.25)) / 6.
  for (const Case& c : std::vector<Case>{
           {R"(type: "ContrastiveLoss")", 25.25f / 6, -0.5f / 0.5001f},
           {R"(type: "ContrastiveLoss" contrastive_loss_param { legacy_version: true })",
            25.75f / 6, -1}}) {
    SCOPED_TRACE(c.text);
    FillValues(&a_, {0, 0, 1, 1, 0, 0});
    FillValues(&b_, {3, 4, 1, 1.5f, 1.2f, 1.6f});
    FillValues(&similar_, {1, 0, 0});
    auto layer = MakeLayer(c.text);
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(layer->BackwardReadsBottomData(i));
    EXPECT_FALSE(layer->BackwardReadsTopData(0));
    EXPECT_TRUE(layer->AllowForceBackward(0));
    EXPECT_TRUE(layer->AllowForceBackward(1));
    EXPECT_FALSE(layer->AllowForceBackward(2));
    layer->SetUp(bottom_, top_);
    ASSERT_EQ(layer->buffers().size(), 2u);
    EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
    EXPECT_EQ(layer->buffers()[1].lifetime, BufferLifetime::kSavedForBackward);
    EXPECT_NEAR(layer->Forward(bottom_, top_), c.loss, 1e-6);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (Blob* blob : {&a_, &b_, &similar_, &loss_}) {
      Set(blob->count(), nan, blob->mutable_cpu_data());
    }
    layer->Backward(top_, {true, true, false}, bottom_);
    // da = c (a - b) / 3: c = 1 for the similar pair, 0 outside the margin.
    const std::vector<float> da{-1, -4.0f / 3, 0, c.coeff * -0.5f / 3, 0, 0};
    for (int i = 0; i < 6; ++i) {
      EXPECT_NEAR(a_.cpu_diff()[i], da[i], 1e-6) << i;
      EXPECT_NEAR(b_.cpu_diff()[i], -da[i], 1e-6) << i;
    }
  }
}

TEST_F(ContrastiveLossLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{5, 3}, {4, 2, 1, 1}, {1, 13}, {13, 1}, {2, 127}}) {
    for (const char* text : {R"(type: "ContrastiveLoss" contrastive_loss_param { margin: 2 })",
                             R"(type: "ContrastiveLoss" loss_weight: 0.5
             contrastive_loss_param { margin: 3 legacy_version: true })"}) {
      SCOPED_TRACE(ShapeString(shape) + text);
      Blob a(shape);
      Blob b(shape);
      FillGaussian(&a, 431, 0.5f);
      FillGaussian(&b, 432, 0.5f);
      Blob similar({shape[0]});
      for (int64_t n = 0; n < shape[0]; ++n) similar.mutable_cpu_data()[n] = n % 3 == 0 ? 1 : 0;
      std::vector<Blob*> bottom{&a, &b, &similar};
      for (int checked : {0, 1}) {
        auto layer = MakeLayer(text);
        GradientChecker checker(1e-2f, 1e-3f);
        checker.CheckGradient(layer.get(), bottom, top_, checked);
      }
    }
  }
}

TEST_F(ContrastiveLossLayerTest, ErrorsNameTheLayer) {
  Blob b({3, 3});
  std::vector<Blob*> mismatch{&a_, &b, &similar_};
  auto layer = MakeLayer(R"(name: "siamese" type: "ContrastiveLoss")");
  ExpectErrorContaining([&] { layer->SetUp(mismatch, top_); },
                        {"ContrastiveLoss layer 'siamese'", "3 2 (6)", "3 3 (9)"});
  Blob similar({2});
  std::vector<Blob*> few{&a_, &b_, &similar};
  ExpectErrorContaining([&] { layer->SetUp(few, top_); },
                        {"ContrastiveLoss layer 'siamese'", "need 3 similarity labels", "2 (2)"});
  layer->SetUp(bottom_, top_);
  layer->Forward(bottom_, top_);
  ExpectErrorContaining(
      [&] {
        layer->Backward(top_, {true, false, true}, bottom_);
      },
      {"ContrastiveLoss layer 'siamese'", "cannot backpropagate to similarity labels"});
}

}  // namespace
}  // namespace demi
