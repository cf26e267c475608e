#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "demi/util/im2col.hpp"
#include "demi/util/math.hpp"

namespace demi {
namespace {

ConvGeometry Geometry(int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t pad_h,
                      int64_t pad_w, int64_t stride_h, int64_t stride_w, int64_t dilation_h,
                      int64_t dilation_w) {
  ConvGeometry g;
  g.channels = c;
  g.height = h;
  g.width = w;
  g.kernel_h = kh;
  g.kernel_w = kw;
  g.pad_h = pad_h;
  g.pad_w = pad_w;
  g.stride_h = stride_h;
  g.stride_w = stride_w;
  g.dilation_h = dilation_h;
  g.dilation_w = dilation_w;
  return g;
}

std::vector<float> Columns(const std::vector<float>& image, const ConvGeometry& g) {
  std::vector<float> columns(
      static_cast<size_t>(g.channels * g.kernel_h * g.kernel_w * g.output_h() * g.output_w()),
      std::numeric_limits<float>::quiet_NaN());
  Im2col(image.data(), g, columns.data());
  return columns;
}

TEST(Im2colTest, PadAndStride) {
  // 3x3 image 1..9, 2x2 kernel, pad 1, stride 2: windows start at (-1, -1),
  // (-1, 1), (1, -1), (1, 1). One row per kernel cell, one column per window.
  const ConvGeometry g = Geometry(1, 3, 3, 2, 2, 1, 1, 2, 2, 1, 1);
  ASSERT_EQ(g.output_h(), 2);
  ASSERT_EQ(g.output_w(), 2);
  EXPECT_EQ(Columns({1, 2, 3, 4, 5, 6, 7, 8, 9}, g), (std::vector<float>{
                                                         0, 0, 0, 5,  // kernel (0, 0)
                                                         0, 0, 4, 6,  // kernel (0, 1)
                                                         0, 2, 0, 8,  // kernel (1, 0)
                                                         1, 3, 7, 9,  // kernel (1, 1)
                                                     }));
}

TEST(Im2colTest, Dilation) {
  // 4x4 image 1..16, 2x2 kernel with dilation 2 (covers 3x3), stride 1.
  std::vector<float> image(16);
  for (int i = 0; i < 16; ++i) image[i] = static_cast<float>(i + 1);
  const ConvGeometry g = Geometry(1, 4, 4, 2, 2, 0, 0, 1, 1, 2, 2);
  ASSERT_EQ(g.output_h(), 2);
  EXPECT_EQ(Columns(image, g), (std::vector<float>{
                                   1, 2, 5, 6,      // kernel (0, 0)
                                   3, 4, 7, 8,      // kernel (0, 1)
                                   9, 10, 13, 14,   // kernel (1, 0)
                                   11, 12, 15, 16,  // kernel (1, 1)
                               }));
}

TEST(Im2colTest, ChannelsAndRectangularSettings) {
  // Two 2x3 channels, a 1x2 kernel with dilation_w 2, pad_w 1, stride_w 2:
  // window columns start at -1 and 1, and read columns {-1, 1} and {1, 3}.
  const ConvGeometry g = Geometry(2, 2, 3, 1, 2, 0, 1, 1, 2, 1, 2);
  ASSERT_EQ(g.output_h(), 2);
  ASSERT_EQ(g.output_w(), 2);
  EXPECT_EQ(Columns({1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}, g), (std::vector<float>{
                                                                        0, 2, 0, 5,    // c0, kw 0
                                                                        2, 0, 5, 0,    // c0, kw 1
                                                                        0, -2, 0, -5,  // c1, kw 0
                                                                        -2, 0, -5, 0,  // c1, kw 1
                                                                    }));
}

TEST(Im2colTest, Col2imSumsOverlappingWindows) {
  // All-ones columns of a 2x2 kernel sliding by 1 over 3x3: each pixel
  // receives the number of windows that cover it.
  const ConvGeometry g = Geometry(1, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1);
  std::vector<float> columns(16, 1.0f);
  std::vector<float> image(9, 42.0f);  // Col2im must overwrite, not add to, the image
  Col2im(columns.data(), g, image.data());
  EXPECT_EQ(image, (std::vector<float>{1, 2, 1, 2, 4, 2, 1, 2, 1}));
}

TEST(Im2colTest, Col2imIsTheAdjointOfIm2col) {
  // <Im2col(x), c> == <x, Col2im(c)> for random x and c.
  const std::vector<ConvGeometry> geometries = {
      Geometry(1, 5, 5, 3, 3, 0, 0, 1, 1, 1, 1),  Geometry(3, 7, 6, 3, 3, 1, 1, 2, 2, 1, 1),
      Geometry(2, 9, 8, 3, 2, 2, 1, 1, 3, 2, 3),  Geometry(4, 5, 7, 1, 1, 0, 0, 1, 1, 1, 1),
      Geometry(2, 13, 5, 4, 2, 1, 0, 3, 1, 1, 2), Geometry(1, 6, 6, 2, 2, 0, 0, 3, 3, 1, 1),
      Geometry(3, 1, 13, 1, 3, 0, 2, 1, 2, 1, 1),
  };
  RandomEngine engine(2024);
  for (const ConvGeometry& g : geometries) {
    const int64_t image_count = g.channels * g.height * g.width;
    const int64_t col_count = g.channels * g.kernel_h * g.kernel_w * g.output_h() * g.output_w();
    ASSERT_GT(col_count, 0);
    std::vector<float> x(image_count), c(col_count), columns(col_count), back(image_count, 7.0f);
    RngGaussian(image_count, 0.0f, 1.0f, x.data(), &engine);
    RngGaussian(col_count, 0.0f, 1.0f, c.data(), &engine);
    Im2col(x.data(), g, columns.data());
    Col2im(c.data(), g, back.data());
    const double lhs = Dot(col_count, columns.data(), c.data());
    const double rhs = Dot(image_count, x.data(), back.data());
    EXPECT_NEAR(lhs, rhs, 1e-4 * std::max(1.0, std::fabs(lhs)))
        << "channels " << g.channels << " image " << g.height << "x" << g.width << " kernel "
        << g.kernel_h << "x" << g.kernel_w;
    // Not vacuous: the products are far from zero.
    EXPECT_GT(std::fabs(lhs), 1e-3);
  }
}

}  // namespace
}  // namespace demi
