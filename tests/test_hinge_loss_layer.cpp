#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "demi/layers/hinge_loss_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Scores [[2, -0.5, 0.5], [0, 1.5, -2]], labels [0, 1]: margins
/// max(0, 1 - t x) = [[0, 0.5, 1.5], [1, 0, 0]].
class HingeLossLayerTest : public ::testing::Test {
 protected:
  HingeLossLayerTest() : x_({2, 3}), labels_({2}) {
    FillValues(&x_, {2, -0.5f, 0.5f, 0, 1.5f, -2});
    FillValues(&labels_, {0, 1});
  }
  Blob x_;
  Blob labels_;
  Blob loss_;
  std::vector<Blob*> bottom_{&x_, &labels_};
  std::vector<Blob*> top_{&loss_};
};

TEST_F(HingeLossLayerTest, ForwardAndBackwardMatchHandComputedReadingNoData) {
  struct Case {
    const char* text;
    float loss;
    std::vector<float> dx;
  };
  // L1: sum 3 / 2; dx = -t [m > 0] / 2. L2: sum 3.5 / 2; dx = -2 t m / 2.
  for (const Case& c :
       std::vector<Case>{{R"(type: "HingeLoss")", 1.5f, {0, 0.5f, 0.5f, 0.5f, 0, 0}},
                         {R"(type: "HingeLoss" hinge_loss_param { norm: L2 })",
                          1.75f,
                          {0, 0.5f, 1.5f, 1, 0, 0}}}) {
    SCOPED_TRACE(c.text);
    FillValues(&x_, {2, -0.5f, 0.5f, 0, 1.5f, -2});
    FillValues(&labels_, {0, 1});
    auto layer = MakeLayer(c.text);
    EXPECT_FALSE(layer->BackwardReadsBottomData(0));
    EXPECT_FALSE(layer->BackwardReadsBottomData(1));
    EXPECT_FALSE(layer->BackwardReadsTopData(0));
    layer->SetUp(bottom_, top_);
    ASSERT_EQ(layer->buffers().size(), 1u);
    EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
    EXPECT_FLOAT_EQ(layer->Forward(bottom_, top_), c.loss);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Set(x_.count(), nan, x_.mutable_cpu_data());
    Set(labels_.count(), nan, labels_.mutable_cpu_data());
    Set(1, nan, loss_.mutable_cpu_data());
    layer->Backward(top_, {true, false}, bottom_);
    EXPECT_EQ(DiffOf(x_), c.dx);
  }
}

TEST_F(HingeLossLayerTest, FourAxisScoresAndLossWeight) {
  Blob x({2, 3, 1, 1});
  FillValues(&x, {2, -0.5f, 0.5f, 0, 1.5f, -2});
  Blob labels({2, 1, 1, 1});
  FillValues(&labels, {0, 1});
  std::vector<Blob*> bottom{&x, &labels};
  auto layer = MakeLayer(R"(type: "HingeLoss" loss_weight: 2)");
  layer->SetUp(bottom, top_);
  EXPECT_FLOAT_EQ(layer->Forward(bottom, top_), 3.0f);
  layer->Backward(top_, {true, false}, bottom);
  EXPECT_EQ(DiffOf(x), (std::vector<float>{0, 1, 1, 1, 0, 0}));
}

TEST_F(HingeLossLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{5, 4}, {13, 1}, {127, 3}, {1, 13}, {2, 3, 2, 2}}) {
    for (const char* text : {R"(type: "HingeLoss")", R"(type: "HingeLoss" loss_weight: 0.5
                                                     hinge_loss_param { norm: L2 })"}) {
      SCOPED_TRACE(ShapeString(shape) + text);
      Blob x(shape);
      FillGaussian(&x, 411, 1.5f);
      float* data = x.mutable_cpu_data();
      for (int64_t i = 0; i < x.count(); ++i) {  // away from the kinks at t x = 1
        if (std::fabs(std::fabs(data[i]) - 1) < 0.02f) data[i] *= 1.1f;
      }
      Blob labels({shape[0]});
      const int64_t dim = x.count(1);
      for (int64_t n = 0; n < shape[0]; ++n) {
        labels.mutable_cpu_data()[n] = static_cast<float>(n * 3 % dim);
      }
      std::vector<Blob*> bottom{&x, &labels};
      auto layer = MakeLayer(text);
      GradientChecker checker(1e-2f, 1e-3f);
      checker.CheckGradient(layer.get(), bottom, top_, 0);
    }
  }
}

TEST_F(HingeLossLayerTest, ErrorsNameTheLayer) {
  Blob labels({2, 2});
  std::vector<Blob*> bottom{&x_, &labels};
  auto count = MakeLayer(R"(name: "hinge" type: "HingeLoss")");
  ExpectErrorContaining([&] { count->SetUp(bottom, top_); },
                        {"HingeLoss layer 'hinge'", "2 3 (6) need 2 labels", "2 2 (4)"});
  auto layer = MakeLayer(R"(name: "hinge" type: "HingeLoss")");
  layer->SetUp(bottom_, top_);
  labels_.mutable_cpu_data()[1] = 3;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                        {"HingeLoss layer 'hinge'", "label 3 at index 1", "[0, 3)", "2 3 (6)"});
  labels_.mutable_cpu_data()[1] = -1;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); }, {"label -1 at index 1"});
  labels_.mutable_cpu_data()[1] = 1;
  layer->Forward(bottom_, top_);
  ExpectErrorContaining(
      [&] {
        layer->Backward(top_, {true, true}, bottom_);
      },
      {"HingeLoss layer 'hinge'", "cannot backpropagate to labels"});
}

}  // namespace
}  // namespace demi
