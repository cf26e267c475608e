#include <gtest/gtest.h>

#include "demi/layers/relu_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(ReLULayerTest, ForwardWithAndWithoutSlope) {
  Blob x({1, 5});
  FillValues(&x, {-2, -0.5, 0, 1, 3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto relu = MakeLayer(R"(type: "ReLU")");
  relu->SetUp(bottom, top);
  relu->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), (std::vector<float>{0, 0, 0, 1, 3}));
  auto leaky = MakeLayer(R"(type: "ReLU" relu_param { negative_slope: 0.1 })");
  leaky->SetUp(bottom, top);
  leaky->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), (std::vector<float>{-0.2f, -0.05f, 0, 1, 3}));
}

TEST(ReLULayerTest, InPlaceBackwardMatchesOutOfPlace) {
  Blob x({2, 3, 4, 5});
  FillGaussian(&x, 3);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto relu = MakeLayer(R"(type: "ReLU" relu_param { negative_slope: 0.25 })");
  relu->SetUp(bottom, top);
  relu->Forward(bottom, top);
  FillGaussian(&y, 4);  // overwrites data; restore below
  std::vector<float> dy(y.cpu_data(), y.cpu_data() + y.count());
  relu->Forward(bottom, top);
  std::copy(dy.begin(), dy.end(), y.mutable_cpu_diff());
  relu->Backward(top, {true}, bottom);
  std::vector<float> expected = DiffOf(x);

  Blob z({2, 3, 4, 5});
  z.CopyFrom(x);
  std::vector<Blob*> in_place{&z};
  auto relu2 = MakeLayer(R"(type: "ReLU" relu_param { negative_slope: 0.25 })");
  relu2->SetUp(in_place, in_place);
  relu2->Forward(in_place, in_place);
  std::copy(dy.begin(), dy.end(), z.mutable_cpu_diff());
  relu2->Backward(in_place, {true}, in_place);
  EXPECT_EQ(DiffOf(z), expected);
}

TEST(ReLULayerTest, Gradient) {
  Blob x({2, 3, 3, 1});
  FillGaussian(&x, 7);
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  for (const char* text :
       {R"(type: "ReLU")", R"(type: "ReLU" relu_param { negative_slope: 0.3 })"}) {
    auto relu = MakeLayer(text);
    GradientChecker checker(1e-3f, 1e-3f, 1701, 0.0f, 0.01f);
    checker.CheckGradient(relu.get(), bottom, top);
  }
}

}  // namespace
}  // namespace demi
