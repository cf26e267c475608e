// The pieces of PointwiseConvolutionMatmuls that run without oneDNN: the
// pixels a strided 1x1 convolution reads, gathered and scattered back (the
// matmuls themselves are checked against FLOAT in test_cpu_channels_last.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "demi/layers/pointwise_conv_matmuls.hpp"

namespace demi {
namespace {

TEST(PointwiseConvolutionMatmulsTest, StridedPixelsGatherAndScatterBack) {
  // 2 images of 5 x 4 pixels of 3 channels; stride 2 x 3 reads 3 x 2 each.
  const PointwiseGeometry g{2, 3, 1, 5, 4, 3, 2, 2, 3};
  std::vector<int16_t> image(2 * 5 * 4 * 3);
  for (size_t k = 0; k < image.size(); ++k) image[k] = static_cast<int16_t>(k + 1);
  std::vector<int16_t> pixels(g.pixels() * 3);
  GatherStridedPixels(g, sizeof(int16_t), image.data(), pixels.data());
  std::vector<int16_t> expected;
  for (int n = 0; n < 2; ++n) {
    for (int h = 0; h < 5; h += 2) {
      for (int w = 0; w < 4; w += 3) {
        for (int c = 0; c < 3; ++c) expected.push_back(image[((n * 5 + h) * 4 + w) * 3 + c]);
      }
    }
  }
  EXPECT_EQ(pixels, expected);
  std::vector<int16_t> back(image.size(), -1);
  ScatterStridedPixels(g, sizeof(int16_t), pixels.data(), back.data());
  for (size_t k = 0; k < image.size(); ++k) {
    const size_t pixel = k / 3, w = pixel % 4, h = pixel / 4 % 5;
    EXPECT_EQ(back[k], h % 2 == 0 && w % 3 == 0 ? image[k] : 0) << k;
  }
}

}  // namespace
}  // namespace demi
