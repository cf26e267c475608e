#ifndef DEMI_DATA_IMAGE_INPUT_HPP_
#define DEMI_DATA_IMAGE_INPUT_HPP_

#include <cstdint>
#include <opencv2/core.hpp>
#include <vector>

namespace demi {

/// How an image file becomes a net input, as pycaffe's Classifier and
/// caffe.io.Transformer prepare one (classify's flags).
struct ImageInputOptions {
  /// Resize to this size before the central crop to the input's; 0: the
  /// input's own size (no crop).
  int resize_height = 0;
  int resize_width = 0;
  /// Net channel c takes image channel channel_swap[c], the image read as
  /// RGB; {2, 1, 0} feeds BGR, as Caffe's models expect. Empty: as read.
  /// Ignored for one-channel inputs.
  std::vector<int> channel_swap;
  /// Pixels are first scaled to [0, raw_scale] (pycaffe loads [0, 1]).
  float raw_scale = 255;
  /// Subtracted after the channel swap: empty, one value for every channel,
  /// one per channel, or one per input element (C x H x W).
  std::vector<float> mean;
  /// Multiplies the result.
  float input_scale = 1;
};

/// Writes `image` (8-bit, gray or BGR as OpenCV decodes it, with as many
/// channels as the input) into `out`, `channels` x `height` x `width` floats:
/// bilinear resize (only where the size differs), central crop, then
///   out[c] = (image[channel_swap[c]] * raw_scale / 255 - mean[c]) * input_scale.
/// Options that cannot apply (a crop larger than the resized image, a
/// channel_swap that is not a permutation, a mean of another size) throw an
/// Error saying which.
void ImageToInput(const cv::Mat& image, const ImageInputOptions& options, int64_t channels,
                  int64_t height, int64_t width, float* out);

}  // namespace demi

#endif  // DEMI_DATA_IMAGE_INPUT_HPP_
