// ImageToInput: pycaffe's preprocessing of an image for a net input, against
// values worked out by hand.
#include <gtest/gtest.h>

#include <vector>

#include "demi/data/image_input.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// A 1 x 2 color image in OpenCV's B, G, R order: (10, 20, 30), (40, 50, 60).
cv::Mat TwoColorPixels() {
  cv::Mat image(1, 2, CV_8UC3);
  image.at<cv::Vec3b>(0, 0) = cv::Vec3b(10, 20, 30);
  image.at<cv::Vec3b>(0, 1) = cv::Vec3b(40, 50, 60);
  return image;
}

std::vector<float> Input(const cv::Mat& image, const ImageInputOptions& options, int64_t channels,
                         int64_t height, int64_t width) {
  std::vector<float> out(channels * height * width, -1.0f);
  ImageToInput(image, options, channels, height, width, out.data());
  return out;
}

TEST(ImageInputTest, ChannelSwapMeanAndScales) {
  ImageInputOptions options;
  options.channel_swap = {2, 1, 0};  // BGR, pycaffe's default for Caffe's models
  options.mean = {1, 2, 3};
  options.input_scale = 0.5f;
  // Channel 0 takes B, 1 G, 2 R: (pixel - mean[c]) * 0.5.
  EXPECT_EQ(Input(TwoColorPixels(), options, 3, 1, 2),
            (std::vector<float>{4.5f, 19.5f, 9, 24, 13.5f, 28.5f}));
  options.channel_swap = {0, 1, 2};  // RGB
  options.mean = {0};
  options.input_scale = 1;
  EXPECT_EQ(Input(TwoColorPixels(), options, 3, 1, 2),
            (std::vector<float>{30, 60, 20, 50, 10, 40}));
  options.channel_swap = {};  // as read: RGB
  options.raw_scale = 1;      // pycaffe's [0, 1]
  const std::vector<float> unit = Input(TwoColorPixels(), options, 3, 1, 2);
  EXPECT_FLOAT_EQ(unit[0], 30 / 255.0f);
  EXPECT_FLOAT_EQ(unit[5], 40 / 255.0f);
  // A mean per element.
  options.raw_scale = 255;
  options.mean = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(Input(TwoColorPixels(), options, 3, 1, 2), (std::vector<float>{29, 58, 17, 46, 5, 34}));
}

TEST(ImageInputTest, CentralCropAfterResize) {
  cv::Mat gray(4, 6, CV_8UC1);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) gray.at<uint8_t>(y, x) = static_cast<uint8_t>(10 * y + x);
  }
  ImageInputOptions options;
  options.resize_height = 4;  // the image's own size: no resize, only the crop
  options.resize_width = 6;
  options.channel_swap = {2, 1, 0};  // ignored for gray
  EXPECT_EQ(Input(gray, options, 1, 2, 2), (std::vector<float>{12, 13, 22, 23}));
  // Without --resize the image is resized to the input: a uniform image stays uniform.
  cv::Mat uniform(7, 5, CV_8UC1, cv::Scalar(77));
  EXPECT_EQ(Input(uniform, ImageInputOptions(), 1, 3, 3), std::vector<float>(9, 77.0f));
}

TEST(ImageInputTest, OptionsThatCannotApplyAreErrors) {
  ImageInputOptions swap;
  swap.channel_swap = {0, 0, 1};
  ExpectErrorContaining([&] { Input(TwoColorPixels(), swap, 3, 1, 2); },
                        {"channel_swap must be a permutation"});
  ImageInputOptions small;
  small.resize_height = small.resize_width = 1;
  ExpectErrorContaining([&] { Input(TwoColorPixels(), small, 3, 1, 2); },
                        {"resize 1x1 is smaller than the input's 1x2"});
  ImageInputOptions mean;
  mean.mean = {1, 2};
  ExpectErrorContaining([&] { Input(TwoColorPixels(), mean, 3, 1, 2); }, {"the mean has 2 values"});
  ExpectErrorContaining([&] { Input(cv::Mat(2, 2, CV_8UC1), ImageInputOptions(), 3, 2, 2); },
                        {"an image of 1 channel(s) cannot feed an input of 3"});
}

}  // namespace
}  // namespace demi
