#include <gtest/gtest.h>

#include <limits>

#include "demi/layers/crop_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Blob of `shape` holding 0, 1, 2, ...
void FillIota(Blob* blob) {
  for (int64_t i = 0; i < blob->count(); ++i) blob->mutable_cpu_data()[i] = static_cast<float>(i);
}

std::vector<float> CropOf(const std::string& text, const std::vector<int64_t>& a_shape,
                          const std::vector<int64_t>& b_shape, std::vector<int64_t>* top_shape) {
  Blob a(a_shape);
  FillIota(&a);
  Blob b(b_shape);
  Blob y;
  std::vector<Blob*> bottom{&a, &b}, top{&y};
  auto layer = MakeLayer(text);
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  *top_shape = y.shape();
  return DataOf(y);
}

TEST(CropLayerTest, ForwardMatchesHandComputed) {
  std::vector<int64_t> shape;
  // A is 3 x 4 (values 0..11) on axes 2, 3.
  EXPECT_EQ(CropOf(R"(type: "Crop" crop_param { offset: 1 offset: 1 })", {1, 1, 3, 4}, {1, 1, 2, 2},
                   &shape),
            (std::vector<float>{5, 6, 9, 10}));
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(CropOf(R"(type: "Crop" crop_param { offset: 1 })", {1, 1, 3, 4}, {1, 1, 2, 2}, &shape),
            (std::vector<float>{5, 6, 9, 10}));
  EXPECT_EQ(CropOf(R"(type: "Crop")", {1, 1, 3, 4}, {7, 9, 2, 3}, &shape),
            (std::vector<float>{0, 1, 2, 4, 5, 6}));
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 1, 2, 3}));
  EXPECT_EQ(CropOf(R"(type: "Crop" crop_param { offset: 0 offset: 2 })", {1, 1, 3, 4}, {1, 1, 3, 1},
                   &shape),
            (std::vector<float>{2, 6, 10}));
  // From axis 0, A 2 x 2 x 3 (0..11): the element [1, 1, 1..2].
  EXPECT_EQ(
      CropOf(R"(type: "Crop" crop_param { axis: 0 offset: 1 })", {2, 2, 3}, {1, 1, 2}, &shape),
      (std::vector<float>{10, 11}));
  // Axis -1 keeps the rows: A 2 x 3 (0..5) to 2 x 2 at offset 1.
  EXPECT_EQ(CropOf(R"(type: "Crop" crop_param { axis: -1 offset: 1 })", {2, 3}, {5, 2}, &shape),
            (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(CropOf(R"(type: "Crop" crop_param { axis: 0 offset: 3 })", {5}, {2}, &shape),
            (std::vector<float>{3, 4}));
}

TEST(CropLayerTest, BackwardScattersIntoTheCropAndReadsNoData) {
  Blob a({1, 1, 3, 4});
  Blob b({1, 1, 2, 2});
  Blob y;
  std::vector<Blob*> bottom{&a, &b}, top{&y};
  auto layer = MakeLayer(R"(type: "Crop" crop_param { offset: 1 })");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_TRUE(layer->AllowForceBackward(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  Set(a.count(), kNaN, a.mutable_cpu_data());
  Set(b.count(), kNaN, b.mutable_cpu_data());
  Set(y.count(), kNaN, y.mutable_cpu_data());
  std::copy_n(std::vector<float>{1, 2, 3, 4}.begin(), 4, y.mutable_cpu_diff());
  Set(a.count(), 7.0f, a.mutable_cpu_diff());
  Set(b.count(), 7.0f, b.mutable_cpu_diff());
  layer->Backward(top, {true, false}, bottom);
  EXPECT_EQ(DiffOf(a), (std::vector<float>{0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0}));
  EXPECT_EQ(DiffOf(b), (std::vector<float>{7, 7, 7, 7}));
  // The reference's values do not reach the top: its gradient is zero.
  layer->Backward(top, {false, true}, bottom);
  EXPECT_EQ(DiffOf(b), (std::vector<float>{0, 0, 0, 0}));
}

TEST(CropLayerTest, Gradient) {
  struct Case {
    std::vector<int64_t> a;
    std::vector<int64_t> b;
    const char* text;
  };
  for (const Case& c : std::vector<Case>{
           {{2, 3, 5, 4}, {2, 3, 3, 2}, R"(type: "Crop" crop_param { offset: 1 offset: 2 })"},
           {{1, 13, 7}, {1, 5, 2}, R"(type: "Crop" crop_param { axis: 1 offset: 3 offset: 4 })"},
           {{127}, {13}, R"(type: "Crop" crop_param { axis: 0 offset: 100 })"},
           {{3, 2, 4},
            {2, 2, 3},
            R"(type: "Crop" crop_param { axis: 0 offset: 1 offset: 0 offset: 1 })"}}) {
    SCOPED_TRACE(c.text);
    Blob a(c.a);
    FillGaussian(&a, 311);
    Blob b(c.b);
    FillGaussian(&b, 312);
    Blob y;
    std::vector<Blob*> bottom{&a, &b}, top{&y};
    auto layer = MakeLayer(c.text);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

TEST(CropLayerTest, BadShapesAndParamsAreErrors) {
  auto setup = [](const std::string& text, const std::vector<int64_t>& a_shape,
                  const std::vector<int64_t>& b_shape, const std::vector<std::string>& parts) {
    Blob a(a_shape);
    Blob b(b_shape);
    Blob y;
    std::vector<Blob*> bottom{&a, &b}, top{&y};
    auto layer = MakeLayer(text);
    ExpectErrorContaining([&] { layer->SetUp(bottom, top); }, parts);
  };
  setup(R"(name: "crop" type: "Crop")", {1, 1, 4, 4}, {1, 2, 2},
        {"Crop layer 'crop'", "1 1 4 4 (16)", "1 2 2 (4)", "number of axes"});
  setup(R"(name: "crop" type: "Crop" crop_param { axis: 4 })", {1, 1, 4, 4}, {1, 1, 2, 2},
        {"Crop layer 'crop'", "crop_param.axis 4 is out of range", "1 1 4 4 (16)"});
  setup(R"(name: "crop" type: "Crop" crop_param { axis: 1 offset: 1 offset: 1 })", {1, 1, 4, 4},
        {1, 1, 2, 2}, {"Crop layer 'crop'", "gives 2 offsets", "from axis 1 takes 0, 1 or 3"});
  setup(R"(name: "crop" type: "Crop" crop_param { offset: 0 offset: 3 })", {1, 1, 4, 4},
        {1, 1, 2, 2},
        {"Crop layer 'crop'", "a crop of 2 at offset 3 on axis 3", "1 1 4 4 (16)",
         "reference 1 1 2 2 (4)"});
  setup(R"(name: "crop" type: "Crop")", {1, 1, 4, 4}, {1, 1, 5, 2}, {"a crop of 5 at offset 0"});
}

}  // namespace
}  // namespace demi
