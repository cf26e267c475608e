#ifndef DEMI_DATA_TRANSFORMER_HPP_
#define DEMI_DATA_TRANSFORMER_HPP_

#include <cstdint>
#include <opencv2/core.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "demi/common.hpp"
#include "demi/data/byte_pixels.hpp"
#include "demi/data/datum_view.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

struct JpegHeader;  // data/jpeg_region.hpp

/// @brief A record that cannot be used: it does not decode, its pixel data
/// does not match its dimensions, or its size differs from the batch's. The
/// data layers add which record it is, and skip it when asked to.
class BadRecordError : public Error {
 public:
  using Error::Error;
};

/// The random engine for one record's augmentation, seeded through
/// std::seed_seq from (seed, epoch, index): the same record of the same
/// epoch is augmented the same way whatever thread or replica handles it.
RandomEngine RecordEngine(uint32_t seed, int64_t epoch, int64_t index);
/// A uniform integer in [0, n), the same on every standard library.
uint32_t RandomIndex(RandomEngine* engine, uint32_t n);
/// A uniform float in [lo, hi), the same on every standard library.
float RandomUniform(RandomEngine* engine, float lo, float hi);

/// A rectangle of an image: rows [y, y + height), columns [x, x + width).
struct CropRect {
  int y = 0;
  int x = 0;
  int height = 0;
  int width = 0;
};

/// Random-resized-crop parameters as torchvision draws them: up to 10 tries
/// of an area fraction uniform in [min_area, max_area] and an aspect ratio
/// (width / height) log-uniform in [min_aspect, max_aspect], placed uniformly;
/// if none fits, the largest central crop whose aspect lies in the range.
CropRect SampleResizedCrop(int height, int width, float min_area, float max_area, float min_aspect,
                           float max_aspect, RandomEngine* engine);

// Color jitter on a C x H x W float image of pixel values in [0, 255]
// (channels in OpenCV's B, G, R order when C = 3); results are clamped to
// [0, 255]. Gray is 0.299 R + 0.587 G + 0.114 B (the channel itself when C = 1).
/// x <- f x
void AdjustBrightness(float factor, int channels, int64_t spatial, float* image);
/// x <- f x + (1 - f) m, m = mean gray value of the image
void AdjustContrast(float factor, int channels, int64_t spatial, float* image);
/// x <- f x + (1 - f) gray(pixel); a no-op unless C = 3
void AdjustSaturation(float factor, int channels, int64_t spatial, float* image);

/// @brief Turns a record (a Datum, raw or encoded, or an image) into a
/// C x H x W float array as Caffe's DataTransformer does, plus the
/// augmentations modern training expects (transform_param):
///
///  1. decode an encoded Datum with OpenCV; force_color / force_gray;
///  2. resize_shorter_side: resize so the shorter side has that length;
///     then NVCaffe's random resize and stretch (img_rand_resize_*,
///     rand_resize_ratio_*, *_stretch_*: transformer_resize.cpp; in both
///     phases, as in NVCaffe; they need crop_size);
///  3. random_resized_crop (TRAIN only): a crop drawn by SampleResizedCrop,
///     resized to crop_size x crop_size;
///  4. crop_size: a random window in TRAIN, the central one in TEST;
///     mirror: a horizontal flip with probability 1/2 (in either phase, as
///     in Caffe);
///  5. color jitter (TRAIN only): brightness, contrast, saturation factors
///     uniform in [max(0, 1 - x), 1 + x], applied in that order;
///  6. out = (pixel - mean) * scale, the mean from mean_file (indexed at the
///     source pixel, as in Caffe) or mean_value (one, or one per channel).
///
/// Random choices come from the engine the caller passes (RecordEngine),
/// drawn in the order: NVCaffe's resize (length, ratio, square's side,
/// vertical, horizontal stretch), resized crop, crop window, mirror, jitter
/// factors.
/// Images keep OpenCV's channel order (BGR), as Caffe's do. Raw Datums that
/// need no OpenCV step take a direct path.
///
/// Encoded JPEGs take a fast path (TransformJpeg; transform_param
/// fast_jpeg_decode: false turns it off): the random draws are the same,
/// made from the size in the JPEG's header, and only the pixels the output
/// samples are decoded, at the smallest DCT scale that does not upsample
/// where steps 2-4 would not. A random resized crop decoded at full scale is
/// then resized as step 3 does; otherwise one bilinear warp does the
/// resizes, crop and mirror of steps 2-4.
///
/// Where nothing after step 4 needs floats (DefersNormalization: no jitter,
/// no mean_file), TransformBytes gives the bytes of steps 1-4 and step 6 can
/// run later, where the batch is used (byte_pixels.hpp), with the same
/// results.
class Transformer {
 public:
  /// `owner` names the user of this transformer in error messages
  /// ("Data layer 'mnist'"). Checks the parameters and reads mean_file.
  Transformer(const TransformationParameter& param, Phase phase, const std::string& owner);

  /// The record as an H x W x C image (CV_8U, or CV_32F for float_data)
  /// after decoding and force_color / force_gray.
  cv::Mat DatumToImage(const DatumView& datum) const;
  /// {C, H, W} of the output for a record (before any random choice).
  std::vector<int64_t> OutputShape(const DatumView& datum) const;
  std::vector<int64_t> OutputShape(const cv::Mat& image) const;

  /// Writes the transformed record into `out`, which holds `shape` =
  /// {C, H, W} floats. A record whose output would have another shape
  /// throws BadRecordError.
  void Transform(const DatumView& datum, const std::vector<int64_t>& shape, RandomEngine* engine,
                 float* out) const;
  void Transform(const cv::Mat& image, const std::vector<int64_t>& shape, RandomEngine* engine,
                 float* out) const;

  /// The fast path for an encoded image (transformer_jpeg.cpp): writes the
  /// output as Transform would, within the tolerance of DCT-domain scaling
  /// and of one bilinear warp for two resizes (README.md, "Fast JPEG
  /// decode"), and returns true; returns false, having drawn nothing, where
  /// it does not apply: fast_jpeg_decode off, NVCaffe's random resize or
  /// stretch set, not a JPEG, a CMYK or
  /// EXIF-rotated one, one with a side of SHRT_MAX or more before or after
  /// resize_shorter_side (OpenCV's warp), or (channels = 1 or 3, the decode the caller asks
  /// for, 0 leaving it to force_color / force_gray and the JPEG) force_*
  /// would convert.
  bool TransformJpeg(std::string_view data, int channels, const std::vector<int64_t>& shape,
                     RandomEngine* engine, float* out) const;
  /// The same as bytes, as TransformBytes gives them.
  bool TransformJpeg(std::string_view data, int channels, const std::vector<int64_t>& shape,
                     RandomEngine* engine, uint8_t* out) const;

  /// Whether step 6 can wait: in this phase no colour jitter, and no
  /// mean_file (whose mean follows each example's crop), so an example is
  /// Normalization() of the bytes of steps 1-4.
  bool DefersNormalization() const;
  /// Step 6 for images of `channels` channels (mean_value: none, one, or one
  /// per channel; an Error naming the owner otherwise).
  PixelNormalization Normalization(int64_t channels) const;
  /// Steps 1-4 into `out` (`shape` = {C, H, W} bytes), where
  /// DefersNormalization(): Transform's output before its mean and scale.
  /// Returns false, having drawn and written nothing, for a record whose
  /// pixels are floats (a float_data Datum, a CV_32F image): Transform takes
  /// those.
  bool TransformBytes(const DatumView& datum, const std::vector<int64_t>& shape,
                      RandomEngine* engine, uint8_t* out) const;
  bool TransformBytes(const cv::Mat& image, const std::vector<int64_t>& shape, RandomEngine* engine,
                      uint8_t* out) const;

  const TransformationParameter& param() const { return param_; }

 private:
  /// Where a transform writes: floats (every step) or bytes (steps 1-4);
  /// one of the two is set.
  struct Output {
    float* floats = nullptr;
    uint8_t* bytes = nullptr;
  };
  void TransformDatum(const DatumView& datum, const std::vector<int64_t>& shape,
                      RandomEngine* engine, const Output& out) const;
  void TransformImage(const cv::Mat& image, const std::vector<int64_t>& shape, RandomEngine* engine,
                      const Output& out) const;
  bool TransformJpegTo(std::string_view data, int channels, const std::vector<int64_t>& shape,
                       RandomEngine* engine, const Output& out) const;
  /// Reads the header of a JPEG the fast path takes (else false) and sets
  /// `*channels` where it is 0 (as TransformJpeg's `channels`).
  bool ReadFastJpegHeader(std::string_view data, int* channels, JpegHeader* header) const;
  /// The output shape of such a JPEG from its header (empty for another
  /// record): OutputShape without decoding a pixel.
  std::vector<int64_t> JpegOutputShape(std::string_view data) const;
  bool NeedsOpenCv(const DatumView& datum) const;
  /// force_color / force_gray, resize_shorter_side, and (with an engine, in
  /// TRAIN) the random resized crop.
  cv::Mat Prepare(const cv::Mat& image, RandomEngine* engine) const;
  /// An image's rows x cols after resize_shorter_side (unchanged without it).
  void ShorterSideResize(int* rows, int* cols) const;
  /// Whether NVCaffe's random resize or stretch fields are set, and the
  /// resize itself (transformer_resize.cpp).
  bool RandomResizes() const;
  cv::Mat RandomResize(const cv::Mat& image, RandomEngine* engine) const;
  std::vector<int64_t> CroppedShape(int64_t channels, int64_t height, int64_t width) const;
  void CheckShape(const std::vector<int64_t>& got, const std::vector<int64_t>& expected) const;
  /// Steps 4 to 6 (4 alone into bytes) on a C x H x W view of pixels
  /// (strides in elements).
  template <typename Pixel>
  void Finish(const Pixel* pixels, int64_t channels, int64_t height, int64_t width,
              int64_t channel_stride, int64_t row_stride, int64_t column_stride,
              const std::vector<int64_t>& shape, RandomEngine* engine, const Output& out) const;
  /// The part of an image the output takes: its crop offsets (random in
  /// TRAIN, centred in TEST) and size, and whether it is mirrored.
  struct Window {
    int64_t top = 0, left = 0, height = 0, width = 0;
    bool mirror = false;
  };
  Window ChooseWindow(int64_t height, int64_t width, const std::vector<int64_t>& shape,
                      RandomEngine* engine) const;
  /// TRAIN's random brightness, contrast and saturation, on C x `spatial`.
  void JitterColours(int channels, int64_t spatial, RandomEngine* engine, float* out) const;
  /// mean_file (over the window of an image of height x width), else
  /// mean_value, then scale.
  void SubtractMeanAndScale(int64_t channels, int64_t height, int64_t width, const Window& window,
                            float* out) const;

  TransformationParameter param_;
  Phase phase_;
  std::string owner_;
  std::vector<float> mean_;  ///< mean_file values, C x H x W
  std::vector<int64_t> mean_shape_;
};

}  // namespace demi

#endif  // DEMI_DATA_TRANSFORMER_HPP_
