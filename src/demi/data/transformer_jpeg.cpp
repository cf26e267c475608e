// Transformer's fast path for encoded JPEGs: the same random draws as
// Transform's, made from the header's size; the resizes, crop and mirror of
// steps 2-4 composed into one bilinear sampling of the full-size image,
// which decodes only the pixels it reads, at a reduced DCT scale (a random
// resized crop at full scale is resized as Transform resizes it instead).
#include <algorithm>
#include <climits>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "demi/data/image_file.hpp"
#include "demi/data/jpeg_region.hpp"
#include "demi/data/transformer.hpp"

namespace demi {

namespace {

/// Integer crops read whole pixels: no clamp before the first resize.
constexpr double kUnclamped = 1e9;
/// Slack for coordinates that are whole numbers up to rounding.
constexpr double kSlack = 1e-6;

/// One axis of the sampling: output index t reads full-size coordinate
/// a t + b (pixel centres at integers, as cv::resize maps them), clamped
/// to [lo, hi], where the reference's resizes stop at their source's edge.
struct Axis {
  double a = 1, b = 0, lo = 0, hi = 0;
};

/// The axis after a resize of `from` pixels to `to` by cv::resize (pixel
/// t of the output reads (t + 0.5) from / to - 0.5 of its input), applied
/// before the sampling `inner` does in the resized image's coordinates.
Axis ThroughResize(const Axis& inner, int from, int to) {
  const double f = static_cast<double>(from) / to;
  Axis axis;
  axis.a = inner.a * f;
  axis.b = (inner.b + 0.5) * f - 0.5;
  axis.lo = std::max(0.0, (inner.lo + 0.5) * f - 0.5);
  axis.hi = std::min(from - 1.0, (inner.hi + 0.5) * f - 0.5);
  return axis;
}

/// The full-size pixels [first, last] the sampling of n outputs reads.
void Footprint(const Axis& axis, int n, int size, int* first, int* last) {
  const double from = std::clamp(axis.b, axis.lo, axis.hi);
  const double to = std::clamp(axis.a * (n - 1) + axis.b, axis.lo, axis.hi);
  *first = std::max(0, static_cast<int>(std::floor(from)));
  *last = std::min(size - 1, static_cast<int>(std::floor(to)) + 1);
}

/// Samples `region` along the axes (full-size coordinates) into an out_h x
/// out_w image: one bilinear warp, border replicated at the clamp box.
cv::Mat Warp(const JpegRegion& region, const Axis& y_axis, const Axis& x_axis, bool mirror,
             int out_h, int out_w) {
  // The sampling in the region's coordinates: scaled pixel k covers
  // full-size [8k/M, 8(k+1)/M), so its centre is full-size (k + 0.5) 8/M - 0.5.
  const double s = region.scale_num / 8.0;
  auto to_region = [s](const Axis& axis, int offset, int size, int* first) {
    Axis scaled;
    scaled.a = axis.a * s;
    scaled.b = (axis.b + 0.5) * s - 0.5 - offset;
    // The clamp box widened to whole pixels: every pixel a sample blends.
    *first = std::clamp(static_cast<int>(std::floor((axis.lo + 0.5) * s - 0.5 - offset + kSlack)),
                        0, size - 1);
    const int end = std::clamp(
        static_cast<int>(std::ceil((axis.hi + 0.5) * s - 0.5 - offset - kSlack)), *first, size - 1);
    scaled.b -= *first;
    scaled.hi = end - *first;
    return scaled;
  };
  int first_row = 0, first_col = 0;
  const Axis ys = to_region(y_axis, region.top, region.image.rows, &first_row);
  const Axis xs = to_region(x_axis, region.left, region.image.cols, &first_col);
  // warpAffine's border replication stops at the clamp box: a view of it.
  const cv::Mat source = region.image(
      cv::Rect(first_col, first_row, static_cast<int>(xs.hi) + 1, static_cast<int>(ys.hi) + 1));
  // Mirrored, output column t reads what column out_w - 1 - t would.
  const double ax = mirror ? -xs.a : xs.a;
  const double bx = mirror ? xs.a * (out_w - 1) + xs.b : xs.b;
  const cv::Matx23d map(ax, 0, bx, 0, ys.a, ys.b);
  cv::Mat sampled;
  cv::warpAffine(source, sampled, map, cv::Size(out_w, out_h),
                 cv::INTER_LINEAR | cv::WARP_INVERSE_MAP, cv::BORDER_REPLICATE);
  return sampled;
}

}  // namespace

bool Transformer::ReadFastJpegHeader(std::string_view data, int* channels,
                                     JpegHeader* header) const {
  if (!param_.fast_jpeg_decode() || RandomResizes()) return false;
  if (!ReadJpegHeader(data, header)) return false;
  // Where imdecode does more than decode: CMYK conversion, EXIF rotation;
  // and images it refuses (kMaxImagePixels), which the full decode fails.
  if (header->components == 4 || header->orientation != 1 ||
      static_cast<int64_t>(header->height) * header->width > kMaxImagePixels) {
    return false;
  }
  // OpenCV's warp (Warp) takes sides below SHRT_MAX only, before and after
  // resize_shorter_side: longer images take the full decode.
  int rows = header->height, cols = header->width;
  ShorterSideResize(&rows, &cols);
  if (std::max({header->height, header->width, rows, cols}) >= SHRT_MAX) return false;
  if (*channels == 0) {
    *channels = param_.force_color()      ? 3
                : param_.force_gray()     ? 1
                : header->components == 1 ? 1
                                          : 3;
  } else if ((param_.force_gray() && *channels != 1) || (param_.force_color() && *channels != 3)) {
    return false;  // ForceChannels would convert what the caller decodes
  }
  return true;
}

std::vector<int64_t> Transformer::JpegOutputShape(std::string_view data) const {
  JpegHeader header;
  int channels = 0;
  if (!ReadFastJpegHeader(data, &channels, &header)) return {};
  // OutputShape(cv::Mat)'s steps on the header's size.
  if (param_.random_resized_crop() && phase_ == TRAIN) {
    return {channels, param_.crop_size(), param_.crop_size()};
  }
  int rows = header.height, cols = header.width;
  ShorterSideResize(&rows, &cols);
  return CroppedShape(channels, rows, cols);
}

bool Transformer::TransformJpeg(std::string_view data, int channels,
                                const std::vector<int64_t>& shape, RandomEngine* engine,
                                float* out) const {
  return TransformJpegTo(data, channels, shape, engine, Output{out, nullptr});
}

bool Transformer::TransformJpeg(std::string_view data, int channels,
                                const std::vector<int64_t>& shape, RandomEngine* engine,
                                uint8_t* out) const {
  DEMI_CHECK(DefersNormalization(), owner_,
             ": TransformJpeg into bytes with jitter or a mean_file");
  return TransformJpegTo(data, channels, shape, engine, Output{nullptr, out});
}

bool Transformer::TransformJpegTo(std::string_view data, int channels,
                                  const std::vector<int64_t>& shape, RandomEngine* engine,
                                  const Output& out) const {
  DEMI_CHECK(engine != nullptr, owner_, ": TransformJpeg needs a random engine (one per example)");
  JpegHeader header;
  if (!ReadFastJpegHeader(data, &channels, &header)) return false;

  // Prepare's size after resize_shorter_side.
  const int height = header.height, width = header.width;
  int rows = height, cols = width;
  ShorterSideResize(&rows, &cols);
  // The draws in Transform's order: resized crop, crop window, mirror
  // (ChooseWindow), then jitter; each output axis mapped back to full size.
  Axis y_axis, x_axis;
  int64_t prepared_h = rows, prepared_w = cols;
  Window window;
  const bool resized_crop = param_.random_resized_crop() && phase_ == TRAIN;
  CropRect rect;
  if (resized_crop) {
    rect = SampleResizedCrop(rows, cols, param_.rrc_min_area(), param_.rrc_max_area(),
                             param_.rrc_min_aspect(), param_.rrc_max_aspect(), engine);
    const int size = static_cast<int>(param_.crop_size());
    prepared_h = prepared_w = size;
    CheckShape(CroppedShape(channels, size, size), shape);
    window = ChooseWindow(size, size, shape, engine);
    // Output t is pixel window + t of the size x size resize of rect.
    Axis in_crop_y{1, static_cast<double>(window.top), -kUnclamped, kUnclamped};
    Axis in_crop_x{1, static_cast<double>(window.left), -kUnclamped, kUnclamped};
    y_axis = ThroughResize(in_crop_y, rect.height, size);
    x_axis = ThroughResize(in_crop_x, rect.width, size);
    y_axis.b += rect.y, y_axis.lo += rect.y, y_axis.hi += rect.y;
    x_axis.b += rect.x, x_axis.lo += rect.x, x_axis.hi += rect.x;
  } else {
    CheckShape(CroppedShape(channels, rows, cols), shape);
    window = ChooseWindow(rows, cols, shape, engine);
    y_axis = Axis{1, static_cast<double>(window.top), -kUnclamped, kUnclamped};
    x_axis = Axis{1, static_cast<double>(window.left), -kUnclamped, kUnclamped};
  }
  y_axis = ThroughResize(y_axis, height, rows);
  x_axis = ThroughResize(x_axis, width, cols);

  // Decode what the sampling reads, at the smallest scale that does not upsample more.
  const int out_h = static_cast<int>(window.height), out_w = static_cast<int>(window.width);
  CropRect footprint;
  int last = 0;
  Footprint(y_axis, out_h, height, &footprint.y, &last);
  footprint.height = last - footprint.y + 1;
  Footprint(x_axis, out_w, width, &footprint.x, &last);
  footprint.width = last - footprint.x + 1;
  const int scale_num = JpegScaleFor(y_axis.a * out_h, x_axis.a * out_w, out_h, out_w);
  // A resized crop of the image as decoded, at full scale: Transform's own
  // steps (cv::resize of the crop, then the mirror), bit-identical.
  const bool as_transform = resized_crop && rows == height && cols == width && scale_num == 8;
  if (as_transform) footprint = rect;
  const JpegRegion region = DecodeJpegRegion(data, footprint, scale_num, channels);
  cv::Mat sampled;
  if (as_transform) {
    cv::resize(region.image, sampled, cv::Size(out_w, out_h), 0, 0, cv::INTER_LINEAR);
    if (window.mirror) cv::flip(sampled, sampled, 1);
  } else {
    sampled = Warp(region, y_axis, x_axis, window.mirror, out_h, out_w);
  }

  // H x W x C bytes to C x H x W: into the output where it takes bytes;
  // else through bytes to floats (NormalizeExample, Finish's arithmetic)
  // where step 6 can wait, or to floats for steps 5 and 6 as Finish does.
  const int64_t spatial = static_cast<int64_t>(out_h) * out_w;
  const bool through_bytes = out.bytes == nullptr && DefersNormalization();
  // Per decode thread: a buffer of an example's bytes, reused.
  thread_local std::vector<uint8_t> staging;
  if (through_bytes) staging.resize(static_cast<size_t>(channels * spatial));
  uint8_t* bytes = out.bytes != nullptr ? out.bytes : staging.data();
  if (out.bytes != nullptr || through_bytes) {
    // split writes into these planes: create() keeps memory of the right size.
    std::vector<cv::Mat> planes;
    for (int c = 0; c < channels; ++c)
      planes.emplace_back(out_h, out_w, CV_8U, bytes + c * spatial);
    cv::split(sampled, planes);
    DEMI_CHECK(planes.size() == static_cast<size_t>(channels) && planes[0].data == bytes, owner_,
               ": the warp gave ", sampled.channels(), " channels of ", sampled.rows, " x ",
               sampled.cols, ", not ", channels, " of ", out_h, " x ", out_w);
    if (through_bytes) NormalizeExample(Normalization(channels), spatial, bytes, out.floats);
    return true;
  }
  std::vector<cv::Mat> planes(channels);
  cv::split(sampled, planes);
  for (int c = 0; c < channels; ++c) {
    cv::Mat plane(out_h, out_w, CV_32F, out.floats + c * spatial);
    planes[c].convertTo(plane, CV_32F);
  }
  if (phase_ == TRAIN) JitterColours(channels, spatial, engine, out.floats);
  SubtractMeanAndScale(channels, prepared_h, prepared_w, window, out.floats);
  return true;
}

}  // namespace demi
