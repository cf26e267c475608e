#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "demi/layers/pooling_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class PoolingLayerTest : public ::testing::Test {
 protected:
  /// Sets up `text` on a bottom of `shape` filled with `values` and runs Forward.
  std::unique_ptr<Layer> Run(const std::string& text, const std::vector<int64_t>& shape,
                             const std::vector<float>& values) {
    bottom_.Reshape(shape);
    FillValues(&bottom_, values);
    auto layer = MakeLayer(text);
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    return layer;
  }

  // A 4x4 plane and the same plus 10 as a second channel.
  const std::vector<float> plane_{1, 5, 2, 0,  //
                                  3, 4, 8, 6,  //
                                  7, 2, 1, 9,  //
                                  0, 6, 3, 5};
  std::vector<float> TwoChannels() const {
    std::vector<float> values = plane_;
    for (float v : plane_) values.push_back(v + 10);
    return values;
  }

  Blob bottom_;
  Blob top_;
  std::vector<Blob*> bottom_vec_{&bottom_};
  std::vector<Blob*> top_vec_{&top_};
};

TEST_F(PoolingLayerTest, MaxByHand) {
  auto layer =
      Run(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 2 stride: 2 engine: CAFFE })",
          {1, 2, 4, 4}, TwoChannels());
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 2, 2, 2}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{5, 8, 7, 9, 15, 18, 17, 19}));
  ASSERT_EQ(layer->buffers().size(), 1u);
  EXPECT_EQ(layer->buffers()[0].name, "argmax");
  EXPECT_EQ(layer->buffers()[0].lifetime, BufferLifetime::kSavedForBackward);
  // Indexes within each plane: 5 at (0,1), 8 at (1,2), 7 at (2,0), 9 at (2,3).
  EXPECT_EQ(DataOf(*layer->buffers()[0].blob), (std::vector<float>{1, 6, 8, 11, 1, 6, 8, 11}));
}

TEST_F(PoolingLayerTest, AveByHand) {
  auto layer =
      Run(R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 2 stride: 2 engine: CAFFE })",
          {1, 2, 4, 4}, TwoChannels());
  // 1+5+3+4 = 13, 2+0+8+6 = 16, 7+2+0+6 = 15, 1+9+3+5 = 18, each over 4.
  EXPECT_EQ(DataOf(top_), (std::vector<float>{3.25f, 4, 3.75f, 4.5f, 13.25f, 14, 13.75f, 14.5f}));
  EXPECT_TRUE(layer->buffers().empty());
}

TEST_F(PoolingLayerTest, OverlappingMaxByHand) {
  Run(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 3 stride: 1 })", {1, 1, 4, 4},
      plane_);
  EXPECT_EQ(DataOf(top_), (std::vector<float>{8, 9, 8, 9}));
}

TEST_F(PoolingLayerTest, CeilRoundingKeepsThePartialWindow) {
  // 5x5 (values 1..25), kernel 2, stride 2: ceil(3 / 2) + 1 = 3 windows a side,
  // the last covering row/column 4 only.
  Run(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 2 stride: 2 })", {1, 1, 5, 5},
      Iota(25));
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{7, 9, 10, 17, 19, 20, 22, 24, 25}));

  Run(R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 2 stride: 2 })", {1, 1, 5, 5},
      Iota(25));
  // No pad: partial windows divide by their clipped size.
  // (1+2+6+7)/4 (3+4+8+9)/4 (5+10)/2 ; (11+12+16+17)/4 (13+14+18+19)/4 (15+20)/2 ;
  // (21+22)/2 (23+24)/2 25
  EXPECT_EQ(DataOf(top_), (std::vector<float>{4, 6, 7.5f, 14, 16, 17.5f, 21.5f, 23.5f, 25}));

  Run(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 2 stride: 2 round_mode: FLOOR })",
      {1, 1, 5, 5}, Iota(25));
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{7, 9, 17, 19}));
}

TEST_F(PoolingLayerTest, CeilModeFalseRoundsDownOnOddSizes) {
  auto top_shape = [&](const std::string& settings, const std::vector<int64_t>& shape) {
    const int64_t count = shape[0] * shape[1] * shape[2] * shape[3];
    Run("type: 'Pooling' pooling_param { " + settings + " }", shape, std::vector<float>(count));
    return top_.shape();
  };
  using Shape = std::vector<int64_t>;
  // DenseNet's and ResNet's stem pool on 112 x 112: kernel 3, stride 2, pad 1.
  // (112 + 2 - 3) / 2 = 55.5: Caffe's ceil gives 57 windows a side (the last
  // starts at 112 < in + pad = 113, so none is dropped); floor gives 56.
  const std::string stem = "pool: MAX kernel_size: 3 stride: 2 pad: 1";
  EXPECT_EQ(top_shape(stem, {1, 1, 112, 112}), (Shape{1, 1, 57, 57}));
  EXPECT_EQ(top_shape(stem + " ceil_mode: false", {1, 1, 112, 112}), (Shape{1, 1, 56, 56}));
  // Odd sizes, kernel 2, stride 2: 7 -> ceil 4, floor 3; 13 -> 7 and 6.
  const std::string two = "pool: AVE kernel_size: 2 stride: 2";
  EXPECT_EQ(top_shape(two + " ceil_mode: false", {2, 3, 7, 13}), (Shape{2, 3, 3, 6}));
  EXPECT_EQ(top_shape(two + " ceil_mode: true", {2, 3, 7, 13}), (Shape{2, 3, 4, 7}));
  // Where the division is exact (kernel 3 on 9: (9 - 3) / 2 = 3) both give 4.
  EXPECT_EQ(top_shape("pool: MAX kernel_size: 3 stride: 2 ceil_mode: false", {1, 1, 9, 9}),
            (Shape{1, 1, 4, 4}));
  EXPECT_EQ(top_shape("pool: MAX kernel_size: 3 stride: 2", {1, 1, 9, 9}), (Shape{1, 1, 4, 4}));
}

TEST_F(PoolingLayerTest, CeilModeFalseDropsThePartialWindow) {
  // 5x5 (1..25), kernel 2, stride 2: the two whole windows a side only.
  Run(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 2 stride: 2 ceil_mode: false })",
      {1, 1, 5, 5}, Iota(25));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{7, 9, 17, 19}));
  // (1+2+6+7)/4 (3+4+8+9)/4 ; (11+12+16+17)/4 (13+14+18+19)/4
  Run(R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 2 stride: 2 ceil_mode: false })",
      {1, 1, 5, 5}, Iota(25));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{4, 6, 14, 16}));
}

TEST_F(PoolingLayerTest, CeilModeAndRoundModeMustAgree) {
  bottom_.Reshape({1, 1, 5, 5});
  // Agreeing spellings are accepted.
  for (const char* both :
       {"round_mode: FLOOR ceil_mode: false", "round_mode: CEIL ceil_mode: true"}) {
    MakeLayer(std::string("type: 'Pooling' pooling_param { kernel_size: 2 stride: 2 ") + both +
              " }")
        ->SetUp(bottom_vec_, top_vec_);
  }
  ExpectErrorContaining(
      [&] {
        MakeLayer(
            "name: 'pool1' type: 'Pooling' pooling_param { kernel_size: 2 stride: 2 "
            "round_mode: CEIL ceil_mode: false }")
            ->SetUp(bottom_vec_, top_vec_);
      },
      {"pool1", "round_mode: CEIL", "ceil_mode: false", "disagree"});
  ExpectErrorContaining(
      [&] {
        MakeLayer(
            "name: 'pool2' type: 'Pooling' pooling_param { kernel_size: 2 stride: 2 "
            "round_mode: FLOOR ceil_mode: true }")
            ->SetUp(bottom_vec_, top_vec_);
      },
      {"pool2", "round_mode: FLOOR", "ceil_mode: true", "disagree"});
}

TEST_F(PoolingLayerTest, PadDropsAWindowStartingInThePad) {
  // 3x3, kernel 2, stride 2, pad 1: ceil((3 + 2 - 2) / 2) + 1 = 3, but the
  // third window would start at (3 - 1) * 2 = 4 >= in + pad = 4 in padded
  // coordinates, so Caffe drops it: 2x2. The windows cover rows {0} and
  // {1, 2}, likewise columns.
  Run(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 2 stride: 2 pad: 1 })",
      {1, 1, 3, 3}, Iota(9, -9));  // -9 .. -1: padding (zero) must never win
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{-9, -7, -3, -1}));

  Run(R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 2 stride: 2 pad: 1 })",
      {1, 1, 3, 3}, Iota(9));
  // Every window is 2x2 within in + pad: 1/4, (2+3)/4, (4+7)/4, (5+6+8+9)/4.
  EXPECT_EQ(DataOf(top_), (std::vector<float>{0.25f, 1.25f, 2.75f, 7}));
}

TEST_F(PoolingLayerTest, AveDividesByTheWindowClippedToThePaddedImage) {
  // 4x4 (1..16), kernel 3, stride 2, pad 1: 3 windows a side, spanning
  // [-1, 2), [1, 4) and [3, 5) once clipped to in + pad = 5: sizes 3, 3, 2.
  Run(R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 })",
      {1, 1, 4, 4}, Iota(16));
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
  ExpectNear(DataOf(top_),
             {14.0f / 9, 30.0f / 9, 12.0f / 6,  //
              57.0f / 9, 99.0f / 9, 36.0f / 6,  //
              27.0f / 6, 45.0f / 6, 16.0f / 4},
             1e-5f);
}

TEST_F(PoolingLayerTest, RectangularSettings) {
  // kernel 1x2, stride 1x2, pad 0x1 on 2x3: columns windows [-1, 1), [1, 3).
  Run(R"(type: "Pooling" pooling_param { pool: MAX kernel_h: 1 kernel_w: 2
         stride_h: 1 stride_w: 2 pad_h: 0 pad_w: 1 })",
      {1, 1, 2, 3}, {1, 5, 2, 6, 3, 4});
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{1, 5, 6, 4}));
}

TEST_F(PoolingLayerTest, GlobalPooling) {
  const std::vector<float> values{1, 2, 3, 4, 5, 6, -1, -7, 0, 2, -3, 1};
  Run(R"(type: "Pooling" pooling_param { pool: MAX global_pooling: true })", {1, 2, 2, 3}, values);
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{6, 2}));
  Run(R"(type: "Pooling" pooling_param { pool: AVE global_pooling: true })", {1, 2, 2, 3}, values);
  ExpectNear(DataOf(top_), {3.5f, -8.0f / 6}, 1e-5f);
}

TEST_F(PoolingLayerTest, MaskTopHoldsTheArgmax) {
  Blob mask;
  std::vector<Blob*> tops{&top_, &mask};
  bottom_.Reshape({1, 2, 4, 4});
  FillValues(&bottom_, TwoChannels());
  auto layer = MakeLayer(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 2 stride: 2 })");
  layer->SetUp(bottom_vec_, tops);
  layer->Forward(bottom_vec_, tops);
  EXPECT_EQ(mask.shape(), top_.shape());
  EXPECT_EQ(DataOf(mask), (std::vector<float>{1, 6, 8, 11, 1, 6, 8, 11}));
}

TEST_F(PoolingLayerTest, WindowOutsideTheImageGivesZero) {
  // Width 5, kernel 1, stride 3, no pad, CEIL: ceil(4 / 3) + 1 = 3 windows at
  // 0, 3 and 6 (Caffe's shape); the last reads nothing.
  auto layer = Run(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 1 stride_h: 1
                      stride_w: 3 })",
                   {1, 1, 1, 5}, {-1, -2, -3, -4, -5});
  EXPECT_EQ(top_.shape(), (std::vector<int64_t>{1, 1, 1, 3}));
  EXPECT_EQ(DataOf(top_), (std::vector<float>{-1, -4, 0}));
  Set(3, 1.0f, top_.mutable_cpu_diff());
  layer->Backward(top_vec_, {true}, bottom_vec_);
  EXPECT_EQ(DiffOf(bottom_), (std::vector<float>{1, 0, 0, 1, 0}));

  auto ave = Run(R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 1 stride_h: 1
                    stride_w: 3 })",
                 {1, 1, 1, 5}, {-1, -2, -3, -4, -5});
  EXPECT_EQ(DataOf(top_), (std::vector<float>{-1, -4, 0}));
  Set(3, 1.0f, top_.mutable_cpu_diff());
  ave->Backward(top_vec_, {true}, bottom_vec_);
  EXPECT_EQ(DiffOf(bottom_), (std::vector<float>{1, 0, 0, 1, 0}));
}

TEST_F(PoolingLayerTest, BackwardByHand) {
  auto max = Run(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 3 stride: 1 })",
                 {1, 1, 4, 4}, plane_);
  FillValues(&top_, {1, 2, 3, 4});
  Copy(4, top_.cpu_data(), top_.mutable_cpu_diff());
  max->Backward(top_vec_, {true}, bottom_vec_);
  // Maxima: 8 at (1,2) twice (dy 1 + 3), 9 at (2,3) twice (dy 2 + 4).
  EXPECT_EQ(DiffOf(bottom_), (std::vector<float>{0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 6, 0, 0, 0, 0}));

  auto ave = Run(R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 2 stride: 2 pad: 1 })",
                 {1, 1, 3, 3}, Iota(9));
  FillValues(&top_, {4, 8, 12, 16});
  Copy(4, top_.cpu_data(), top_.mutable_cpu_diff());
  ave->Backward(top_vec_, {true}, bottom_vec_);
  // Each window has divisor 4; window (0,0) holds x[0][0], (0,1) row 0 cols 1-2, ...
  EXPECT_EQ(DiffOf(bottom_), (std::vector<float>{1, 2, 2, 3, 4, 4, 3, 4, 4}));
}

TEST_F(PoolingLayerTest, BackwardReadsNeitherBottomNorTopData) {
  for (const char* text :
       {R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 3 stride: 2 })",
        R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 })"}) {
    bottom_.Reshape({2, 3, 7, 6});
    FillDistinct(&bottom_, 3);
    auto layer = MakeLayer(text);
    EXPECT_FALSE(layer->BackwardReadsBottomData(0));
    EXPECT_FALSE(layer->BackwardReadsTopData(0));
    layer->SetUp(bottom_vec_, top_vec_);
    layer->Forward(bottom_vec_, top_vec_);
    FillGaussian(&top_, 4);
    Copy(top_.count(), top_.cpu_data(), top_.mutable_cpu_diff());
    Set(bottom_.count(), 5.0f, bottom_.mutable_cpu_diff());
    layer->Backward(top_vec_, {true}, bottom_vec_);
    const std::vector<float> expected = DiffOf(bottom_);
    Set(top_.count(), kNaN, top_.mutable_cpu_data());
    Set(bottom_.count(), kNaN, bottom_.mutable_cpu_data());
    Set(bottom_.count(), kNaN, bottom_.mutable_cpu_diff());
    layer->Backward(top_vec_, {true}, bottom_vec_);
    EXPECT_EQ(DiffOf(bottom_), expected) << text;
    double total = 0;  // not vacuous: the gradient is non-trivial
    for (float v : expected) total += std::fabs(v);
    EXPECT_GT(total, 0.1) << text;
  }
}

TEST_F(PoolingLayerTest, GradientMax) {
  bottom_.Reshape({2, 3, 7, 5});
  FillDistinct(&bottom_, 21);
  auto layer = MakeLayer(R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 3 stride: 2 })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(PoolingLayerTest, GradientMaxPadRectangular) {
  bottom_.Reshape({1, 2, 13, 6});
  FillDistinct(&bottom_, 22);
  auto layer = MakeLayer(R"(type: "Pooling" pooling_param { pool: MAX kernel_h: 3 kernel_w: 2
      stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 1 })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(PoolingLayerTest, GradientAve) {
  bottom_.Reshape({2, 3, 7, 5});
  FillGaussian(&bottom_, 23);
  auto layer = MakeLayer(R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 3 stride: 2 })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(PoolingLayerTest, GradientAvePad) {
  bottom_.Reshape({1, 2, 4, 13});
  FillGaussian(&bottom_, 24);
  auto layer = MakeLayer(R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 3 stride: 2
      pad: 1 })");
  GradientChecker checker(1e-2f, 1e-3f);
  checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
}

TEST_F(PoolingLayerTest, GradientCeilModeFalse) {
  // Odd sizes where floor and ceil differ, padded and not.
  bottom_.Reshape({1, 2, 8, 7});
  FillDistinct(&bottom_, 26);
  for (const char* text :
       {R"(type: "Pooling" pooling_param { pool: MAX kernel_size: 3 stride: 2 pad: 1
           ceil_mode: false })",
        R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 2 stride: 2 ceil_mode: false })",
        R"(type: "Pooling" pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1
           ceil_mode: false })"}) {
    auto layer = MakeLayer(text);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
  }
}

TEST_F(PoolingLayerTest, GradientGlobal) {
  bottom_.Reshape({2, 3, 5, 1});
  FillDistinct(&bottom_, 25);
  for (const char* text : {R"(type: "Pooling" pooling_param { pool: MAX global_pooling: true })",
                           R"(type: "Pooling" pooling_param { pool: AVE global_pooling: true })"}) {
    auto layer = MakeLayer(text);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom_vec_, top_vec_);
    EXPECT_EQ(top_.shape(), (std::vector<int64_t>{2, 3, 1, 1})) << text;
  }
}

TEST_F(PoolingLayerTest, BadSettingsNameTheLayer) {
  bottom_.Reshape({1, 2, 3, 3});
  auto setup = [&](const std::string& settings) {
    MakeLayer("name: 'pool' type: 'Pooling' pooling_param { " + settings + " }")
        ->SetUp(bottom_vec_, top_vec_);
  };
  ExpectErrorContaining([&] { setup("pool: STOCHASTIC kernel_size: 2"); },
                        {"pool", "STOCHASTIC", "not supported"});
  ExpectErrorContaining([&] { setup("global_pooling: true kernel_size: 2"); },
                        {"pool", "global_pooling", "remove kernel_size"});
  ExpectErrorContaining([&] { setup("global_pooling: true stride: 2"); },
                        {"pool", "global_pooling", "pad 0 and stride 1", "stride 2 x 2"});
  ExpectErrorContaining([&] { setup("stride: 2"); },
                        {"pool", "kernel_size or both kernel_h and kernel_w"});
  ExpectErrorContaining([&] { setup("kernel_h: 2"); },
                        {"pool", "kernel_size or both kernel_h and kernel_w"});
  ExpectErrorContaining([&] { setup("kernel_size: 2 kernel_h: 2 kernel_w: 2"); },
                        {"pool", "kernel_size or both kernel_h and kernel_w"});
  ExpectErrorContaining([&] { setup("kernel_size: 0"); }, {"pool", "non-zero kernel", "0 x 0"});
  ExpectErrorContaining([&] { setup("kernel_size: 2 pad: 1 pad_h: 1 pad_w: 1"); },
                        {"pool", "pad or both pad_h and pad_w"});
  ExpectErrorContaining([&] { setup("kernel_size: 2 pad_w: 1"); },
                        {"pool", "pad or both pad_h and pad_w"});
  ExpectErrorContaining([&] { setup("kernel_size: 2 stride: 1 stride_h: 1 stride_w: 1"); },
                        {"pool", "stride or both stride_h and stride_w"});
  ExpectErrorContaining([&] { setup("kernel_size: 2 stride: 0"); },
                        {"pool", "non-zero stride", "0 x 0"});
  ExpectErrorContaining([&] { setup("kernel_size: 2 pad: 2"); },
                        {"pool", "pad 2 x 2", "smaller than the kernel 2 x 2"});
  ExpectErrorContaining([&] { setup("kernel_size: 5"); },
                        {"pool", "kernel 5 x 5 does not fit", "1 2 3 3", "padded by 0 x 0"});
  bottom_.Reshape({2, 3, 3});
  ExpectErrorContaining([&] { setup("kernel_size: 2"); }, {"pool", "4-D", "2 3 3"});
  bottom_.Reshape({1, 1, 1, (int64_t{1} << 24) + 1});
  ExpectErrorContaining([&] { setup("kernel_size: 1"); }, {"pool", "argmax", "16777216"});
  // AVE has no mask top.
  Blob mask;
  std::vector<Blob*> tops{&top_, &mask};
  bottom_.Reshape({1, 1, 4, 4});
  ExpectErrorContaining(
      [&] {
        MakeLayer("name: 'pool' type: 'Pooling' pooling_param { pool: AVE kernel_size: 2 }")
            ->SetUp(bottom_vec_, tops);
      },
      {"pool", "at most 1 top"});
}

}  // namespace
}  // namespace demi
