#include "demi/data/image_input.hpp"

#include <algorithm>
#include <opencv2/imgproc.hpp>

#include "demi/common.hpp"

namespace demi {

namespace {

/// For each net channel, the OpenCV channel (B, G, R order) it reads.
std::vector<int> SourceChannels(const std::vector<int>& channel_swap, int64_t channels) {
  if (channels == 1) return {0};
  std::vector<int> rgb(channels);
  for (int64_t c = 0; c < channels; ++c) rgb[c] = static_cast<int>(c);
  if (!channel_swap.empty()) {
    std::vector<int> sorted = channel_swap;
    std::sort(sorted.begin(), sorted.end());
    DEMI_CHECK(sorted == rgb, "channel_swap must be a permutation of the input's ", channels,
               " channels (e.g. 2,1,0), got ", channel_swap.size(), " value(s)");
    rgb = channel_swap;
  }
  // OpenCV holds B, G, R: RGB channel k is OpenCV's channel 2 - k.
  std::vector<int> source(channels);
  for (int64_t c = 0; c < channels; ++c) source[c] = static_cast<int>(channels - 1 - rgb[c]);
  return source;
}

}  // namespace

void ImageToInput(const cv::Mat& image, const ImageInputOptions& options, int64_t channels,
                  int64_t height, int64_t width, float* out) {
  DEMI_CHECK(image.depth() == CV_8U && image.channels() == channels, "an image of ",
             image.channels(), " channel(s) cannot feed an input of ", channels);
  const int resize_height = options.resize_height > 0 ? options.resize_height : height;
  const int resize_width = options.resize_width > 0 ? options.resize_width : width;
  DEMI_CHECK(resize_height >= height && resize_width >= width, "resize ", resize_height, "x",
             resize_width, " is smaller than the input's ", height, "x", width,
             ": the central crop must fit inside the resized image");
  cv::Mat resized = image;
  if (image.rows != resize_height || image.cols != resize_width) {
    cv::resize(image, resized, cv::Size(resize_width, resize_height), 0, 0, cv::INTER_LINEAR);
  }
  const int64_t spatial = height * width;
  const size_t mean_size = options.mean.size();
  DEMI_CHECK(mean_size == 0 || mean_size == 1 || mean_size == static_cast<size_t>(channels) ||
                 mean_size == static_cast<size_t>(channels * spatial),
             "the mean has ", mean_size, " values; give one, one per channel (", channels,
             ") or one per input element (", channels, "x", height, "x", width, ")");
  auto mean_at = [&](int64_t c, int64_t index) {
    if (mean_size == 0) return 0.0f;
    if (mean_size == 1) return options.mean[0];
    return options.mean[mean_size == static_cast<size_t>(channels) ? c : index];
  };
  const std::vector<int> source = SourceChannels(options.channel_swap, channels);
  const float pixel_scale = options.raw_scale / 255.0f;
  const int64_t top = (resize_height - height) / 2;
  const int64_t left = (resize_width - width) / 2;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t y = 0; y < height; ++y) {
      const uint8_t* row = resized.ptr<uint8_t>(static_cast<int>(top + y));
      for (int64_t x = 0; x < width; ++x) {
        const int64_t index = (c * height + y) * width + x;
        const float value = row[(left + x) * channels + source[c]] * pixel_scale;
        out[index] = (value - mean_at(c, index)) * options.input_scale;
      }
    }
  }
}

}  // namespace demi
