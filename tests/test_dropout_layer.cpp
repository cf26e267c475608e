#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "demi/layers/dropout_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(DropoutLayerTest, TestPhaseIsIdentity) {
  Blob x({2, 3, 4});
  FillGaussian(&x, 141);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Dropout" phase: TEST dropout_param { dropout_ratio: 0.7 })");
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), DataOf(x));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].blob->count(), 0);  // no mask kept outside TRAIN
  FillGaussian(&x, 142);                            // new gradient source, through the data
  std::copy_n(x.cpu_data(), x.count(), y.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);
  EXPECT_EQ(DiffOf(x), DataOf(x));

  std::vector<Blob*> in_place{&x};
  const std::vector<float> before = DataOf(x);
  layer->SetUp(in_place, in_place);
  layer->Forward(in_place, in_place);
  EXPECT_EQ(DataOf(x), before);
}

TEST(DropoutLayerTest, TrainPhaseKeepsOrScalesEachElement) {
  for (float ratio : {0.5f, 0.2f, 0.9f}) {
    SCOPED_TRACE(ratio);
    Blob x({100, 100});
    FillUniform(&x, 151, 1.0f, 2.0f);  // never zero, so a zero output means dropped
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    LayerParameter param = ParseText<LayerParameter>(R"(type: "Dropout" phase: TRAIN)");
    param.mutable_dropout_param()->set_dropout_ratio(ratio);
    auto layer = LayerRegistry::Create(param);
    layer->SetUp(bottom, top);
    layer->SeedRng(152);
    layer->Forward(bottom, top);
    const float scale = 1.0f / (1.0f - ratio);
    int64_t kept = 0;
    for (int64_t i = 0; i < x.count(); ++i) {
      const float out = y.cpu_data()[i];
      if (out != 0.0f) {
        EXPECT_FLOAT_EQ(out, x.cpu_data()[i] * scale) << i;
        ++kept;
      }
    }
    // 10000 draws: the kept fraction is 1 - ratio within 5 standard deviations.
    const double sigma = std::sqrt(ratio * (1.0 - ratio) / x.count());
    EXPECT_NEAR(static_cast<double>(kept) / x.count(), 1.0 - ratio, 5 * sigma);
  }
}

TEST(DropoutLayerTest, ZeroRatioKeepsEverything) {
  Blob x({13});
  FillGaussian(&x, 161);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Dropout" phase: TRAIN dropout_param { dropout_ratio: 0 })");
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), DataOf(x));
}

TEST(DropoutLayerTest, BackwardUsesTheMaskAndReadsNoData) {
  Blob x({4, 5});
  FillUniform(&x, 171, 1.0f, 2.0f);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Dropout" phase: TRAIN dropout_param { dropout_ratio: 0.75 })");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  layer->SetUp(bottom, top);
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  EXPECT_EQ(layer->buffers()[0].blob->count(), 20);
  layer->Forward(bottom, top);
  const std::vector<float> out = DataOf(y);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Set(x.count(), nan, x.mutable_cpu_data());
  Set(y.count(), nan, y.mutable_cpu_data());
  Set(y.count(), 3.0f, y.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);
  int64_t kept = 0;
  for (int64_t i = 0; i < x.count(); ++i) {
    // 1 / (1 - 0.75) = 4: a kept element passes 3 * 4 = 12.
    EXPECT_EQ(x.cpu_diff()[i], out[i] != 0.0f ? 12.0f : 0.0f) << i;
    kept += out[i] != 0.0f;
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 20);
}

TEST(DropoutLayerTest, InPlaceMatchesOutOfPlace) {
  Blob x({3, 13});
  FillGaussian(&x, 181);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Dropout" phase: TRAIN)");
  layer->SetUp(bottom, top);
  layer->SeedRng(182);
  layer->Forward(bottom, top);
  Set(y.count(), 1.0f, y.mutable_cpu_diff());
  layer->Backward(top, {true}, bottom);

  Blob z({3, 13});
  z.CopyFrom(x);
  std::vector<Blob*> in_place{&z};
  auto layer2 = MakeLayer(R"(type: "Dropout" phase: TRAIN)");
  layer2->SetUp(in_place, in_place);
  layer2->SeedRng(182);
  layer2->Forward(in_place, in_place);
  EXPECT_EQ(DataOf(z), DataOf(y));
  Set(z.count(), 1.0f, z.mutable_cpu_diff());
  layer2->Backward(in_place, {true}, in_place);
  EXPECT_EQ(DiffOf(z), DiffOf(x));
}

TEST(DropoutLayerTest, SeedDecidesTheMask) {
  Blob x({64});
  FillUniform(&x, 191, 1.0f, 2.0f);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Dropout" phase: TRAIN)");
  layer->SetUp(bottom, top);
  layer->SeedRng(5);
  layer->Forward(bottom, top);
  const std::vector<float> first = DataOf(y);
  layer->SeedRng(5);
  layer->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), first);
  layer->Forward(bottom, top);  // the stream moved on: another mask
  EXPECT_NE(DataOf(y), first);
}

TEST(DropoutLayerTest, GradientInTrainPhase) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3, 4, 5}, {13}, {1, 127}, {1}}) {
    Blob x(shape);
    FillGaussian(&x, 201);
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(R"(type: "Dropout" phase: TRAIN dropout_param { dropout_ratio: 0.3 })");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

TEST(DropoutLayerTest, RatioOutsideUnitIntervalIsAnError) {
  Blob x({2});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  for (const char* ratio : {"1", "-0.1", "1.5"}) {
    const std::string text =
        StrCat(R"(name: "drop" type: "Dropout" dropout_param { dropout_ratio: )", ratio, " }");
    auto layer = MakeLayer(text);
    ExpectErrorContaining([&] { layer->SetUp(bottom, top); },
                          {"Dropout layer 'drop'", "dropout_ratio in [0, 1)"});
  }
}

}  // namespace
}  // namespace demi
