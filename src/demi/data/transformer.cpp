#include "demi/data/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <type_traits>

#include "demi/blob.hpp"
#include "demi/data/image_file.hpp"
#include "demi/util/io.hpp"

namespace demi {

namespace {

constexpr float kGrayB = 0.114f;
constexpr float kGrayG = 0.587f;
constexpr float kGrayR = 0.299f;

float Clamp255(float x) { return std::min(255.0f, std::max(0.0f, x)); }

/// Blends every value towards `toward(i)` (the i-th pixel's target):
/// x <- f x + (1 - f) t, clamped.
template <typename Target>
void Blend(float factor, int channels, int64_t spatial, float* image, Target toward) {
  for (int c = 0; c < channels; ++c) {
    float* plane = image + c * spatial;
    for (int64_t i = 0; i < spatial; ++i) {
      plane[i] = Clamp255(factor * plane[i] + (1.0f - factor) * toward(i));
    }
  }
}

float Gray(const float* image, int64_t spatial, int64_t i) {
  return kGrayB * image[i] + kGrayG * image[spatial + i] + kGrayR * image[2 * spatial + i];
}

}  // namespace

// ---- randomness ----

RandomEngine RecordEngine(uint32_t seed, int64_t epoch, int64_t index) {
  const auto e = static_cast<uint64_t>(epoch);
  const auto r = static_cast<uint64_t>(index);
  std::seed_seq seq{seed, static_cast<uint32_t>(e), static_cast<uint32_t>(e >> 32),
                    static_cast<uint32_t>(r), static_cast<uint32_t>(r >> 32)};
  return RandomEngine(seq);
}

uint32_t RandomIndex(RandomEngine* engine, uint32_t n) {
  CHECK_GT(n, 0u);
  return static_cast<uint32_t>((*engine)()) % n;
}

float RandomUniform(RandomEngine* engine, float lo, float hi) {
  const float unit =
      static_cast<float>(static_cast<uint32_t>((*engine)()) >> 8) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * unit;
}

CropRect SampleResizedCrop(int height, int width, float min_area, float max_area, float min_aspect,
                           float max_aspect, RandomEngine* engine) {
  const double area = static_cast<double>(height) * width;
  const float log_min = std::log(min_aspect);
  const float log_max = std::log(max_aspect);
  CropRect rect;
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * RandomUniform(engine, min_area, max_area);
    const double aspect = std::exp(RandomUniform(engine, log_min, log_max));
    const int w = static_cast<int>(std::lround(std::sqrt(target * aspect)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / aspect)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      rect.height = h;
      rect.width = w;
      rect.y = static_cast<int>(RandomIndex(engine, static_cast<uint32_t>(height - h + 1)));
      rect.x = static_cast<int>(RandomIndex(engine, static_cast<uint32_t>(width - w + 1)));
      return rect;
    }
  }
  // Fallback: the whole image, narrowed to the nearest allowed aspect.
  const double ratio = static_cast<double>(width) / height;
  rect.width = width;
  rect.height = height;
  if (ratio < min_aspect) {
    rect.height = std::max(1, static_cast<int>(std::lround(width / min_aspect)));
  } else if (ratio > max_aspect) {
    rect.width = std::max(1, static_cast<int>(std::lround(height * max_aspect)));
  }
  rect.y = (height - rect.height) / 2;
  rect.x = (width - rect.width) / 2;
  return rect;
}

// ---- color jitter ----

void AdjustBrightness(float factor, int channels, int64_t spatial, float* image) {
  const int64_t count = channels * spatial;
  for (int64_t i = 0; i < count; ++i) image[i] = Clamp255(factor * image[i]);
}

void AdjustContrast(float factor, int channels, int64_t spatial, float* image) {
  double sum = 0;
  int64_t count = spatial;
  if (channels == 3) {
    for (int64_t i = 0; i < spatial; ++i) sum += Gray(image, spatial, i);
  } else {
    count = channels * spatial;
    for (int64_t i = 0; i < count; ++i) sum += image[i];
  }
  const auto mean = static_cast<float>(sum / static_cast<double>(count));
  Blend(factor, channels, spatial, image, [mean](int64_t) { return mean; });
}

void AdjustSaturation(float factor, int channels, int64_t spatial, float* image) {
  if (channels != 3) return;
  std::vector<float> gray(spatial);
  for (int64_t i = 0; i < spatial; ++i) gray[i] = Gray(image, spatial, i);
  Blend(factor, channels, spatial, image, [&gray](int64_t i) { return gray[i]; });
}

// ---- Transformer ----

Transformer::Transformer(const TransformationParameter& param, Phase phase,
                         const std::string& owner)
    : param_(param), phase_(phase), owner_(owner) {
  DEMI_CHECK(!(param.force_color() && param.force_gray()), owner_,
             ": transform_param sets both force_color and force_gray");
  DEMI_CHECK(!(param.has_mean_file() && param.mean_value_size() > 0), owner_,
             ": transform_param gives both mean_file and mean_value; give one");
  DEMI_CHECK(!param.random_resized_crop() || param.crop_size() > 0, owner_,
             ": transform_param random_resized_crop needs crop_size (the output size)");
  DEMI_CHECK(param.rrc_min_area() > 0 && param.rrc_min_area() <= param.rrc_max_area() &&
                 param.rrc_max_area() <= 1,
             owner_, ": transform_param needs 0 < rrc_min_area <= rrc_max_area <= 1, got ",
             param.rrc_min_area(), " and ", param.rrc_max_area());
  DEMI_CHECK(param.rrc_min_aspect() > 0 && param.rrc_min_aspect() <= param.rrc_max_aspect(), owner_,
             ": transform_param needs 0 < rrc_min_aspect <= rrc_max_aspect, got ",
             param.rrc_min_aspect(), " and ", param.rrc_max_aspect());
  DEMI_CHECK(param.brightness() >= 0 && param.contrast() >= 0 && param.saturation() >= 0, owner_,
             ": transform_param brightness, contrast and saturation must be >= 0");
  // NVCaffe's random resize gives images of any size: the crop makes the
  // batch's shape.
  DEMI_CHECK(!RandomResizes() || param.crop_size() > 0, owner_,
             ": transform_param's random resize or stretch (img_rand_resize_*, "
             "rand_resize_ratio_*, vertical_stretch_*, horizontal_stretch_*) needs crop_size");
  DEMI_CHECK((param.img_rand_resize_lower() > 0) == (param.img_rand_resize_upper() > 0) &&
                 param.img_rand_resize_lower() <= param.img_rand_resize_upper(),
             owner_,
             ": transform_param needs both of img_rand_resize_lower and _upper, lower <= "
             "upper, got ",
             param.img_rand_resize_lower(), " and ", param.img_rand_resize_upper());
  if (param.has_mean_file()) {
    BlobProto proto;
    try {
      ReadProtoFromBinaryFile(param.mean_file(), &proto);
    } catch (const Error& error) {
      ThrowError(StrCat(owner_, ": mean_file: ", error.what()));
    }
    std::vector<int64_t> shape = ShapeFromProto(proto);
    while (shape.size() > 3 && shape.front() == 1) shape.erase(shape.begin());
    int64_t count = 1;
    for (int64_t dim : shape) count *= dim;
    DEMI_CHECK(shape.size() == 3 && count == proto.data_size(), owner_, ": mean_file '",
               param.mean_file(), "' must hold one C x H x W mean image, got shape ",
               ShapeString(ShapeFromProto(proto)), " with ", proto.data_size(), " values");
    mean_shape_ = shape;
    mean_.assign(proto.data().begin(), proto.data().end());
  }
}

bool Transformer::NeedsOpenCv(const DatumView& datum) const {
  return datum.encoded() || (param_.force_color() && datum.channels() == 1) ||
         (param_.force_gray() && datum.channels() != 1) || param_.resize_shorter_side() > 0 ||
         RandomResizes() || (param_.random_resized_crop() && phase_ == TRAIN);
}

namespace {

cv::Mat ForceChannels(const cv::Mat& image, const TransformationParameter& param) {
  cv::Mat out = image;
  if (out.channels() == 4) {
    cv::Mat converted;
    cv::cvtColor(out, converted, param.force_gray() ? cv::COLOR_BGRA2GRAY : cv::COLOR_BGRA2BGR);
    out = converted;
  }
  if (param.force_gray() && out.channels() == 3) {
    cv::Mat converted;
    cv::cvtColor(out, converted, cv::COLOR_BGR2GRAY);
    out = converted;
  } else if (param.force_color() && out.channels() == 1) {
    cv::Mat converted;
    cv::cvtColor(out, converted, cv::COLOR_GRAY2BGR);
    out = converted;
  }
  return out;
}

/// Wraps C planes of H x W values as one H x W x C image (a copy).
cv::Mat PlanesToImage(const void* data, int type, int channels, int height, int width,
                      size_t element_size) {
  std::vector<cv::Mat> planes;
  const char* bytes = static_cast<const char*>(data);
  const size_t plane_bytes = static_cast<size_t>(height) * width * element_size;
  for (int c = 0; c < channels; ++c) {
    planes.emplace_back(height, width, type, const_cast<char*>(bytes + c * plane_bytes));
  }
  cv::Mat image;
  cv::merge(planes, image);
  return image;
}

std::string Dims(int64_t c, int64_t h, int64_t w) { return StrCat(c, "x", h, "x", w); }

/// Checks a raw Datum's dimensions against its pixel data; returns true for
/// uint8 data, false for float_data.
bool CheckRawDatum(const DatumView& datum) {
  const int64_t c = datum.channels(), h = datum.height(), w = datum.width();
  if (c <= 0 || h <= 0 || w <= 0) {
    throw BadRecordError(StrCat("has dimensions ", Dims(c, h, w),
                                "; a raw Datum needs positive channels, height and width"));
  }
  // Each dimension fits an int32, their product need not fit an int64.
  int64_t expected = 0;
  if (__builtin_mul_overflow(c, h, &expected) || __builtin_mul_overflow(expected, w, &expected)) {
    throw BadRecordError(StrCat("has dimensions ", Dims(c, h, w), ", whose product overflows"));
  }
  if (!datum.data().empty()) {
    const auto got = static_cast<int64_t>(datum.data().size());
    if (got != expected) {
      throw BadRecordError(StrCat("holds ", got, " bytes of pixel data, but its dimensions ",
                                  Dims(c, h, w), " need ", expected));
    }
    return true;
  }
  if (datum.float_data_size() == 0) throw BadRecordError("holds no pixel data");
  if (datum.float_data_size() != expected) {
    throw BadRecordError(StrCat("holds ", datum.float_data_size(),
                                " float values, but its dimensions ", Dims(c, h, w), " need ",
                                expected));
  }
  return false;
}

}  // namespace

cv::Mat Transformer::DatumToImage(const DatumView& datum) const {
  if (datum.encoded()) {
    const std::string_view data = datum.data();
    if (data.empty()) throw BadRecordError("is marked encoded but holds no data");
    const std::string truncation = ImageTruncation(data, data);
    if (!truncation.empty()) {
      throw BadRecordError(
          StrCat("holds encoded data that ", truncation, " (", data.size(), " bytes)"));
    }
    const int flags = param_.force_color()  ? cv::IMREAD_COLOR
                      : param_.force_gray() ? cv::IMREAD_GRAYSCALE
                                            : cv::IMREAD_ANYCOLOR;
    cv::Mat image;
    try {
      image = cv::imdecode(
          cv::Mat(1, static_cast<int>(data.size()), CV_8UC1, const_cast<char*>(data.data())),
          flags);
    } catch (const cv::Exception&) {
      image = cv::Mat();
    }
    if (image.empty()) {
      throw BadRecordError(
          StrCat("does not decode as an image (", data.size(), " bytes of encoded data)"));
    }
    return ForceChannels(image, param_);
  }
  const bool bytes = CheckRawDatum(datum);
  if (datum.channels() > CV_CN_MAX) {
    throw BadRecordError(StrCat("has ", datum.channels(),
                                " channels; OpenCV's steps (force_color, ",
                                "force_gray, resizes) take at most ", CV_CN_MAX));
  }
  const cv::Mat image = bytes ? PlanesToImage(datum.data().data(), CV_8UC1, datum.channels(),
                                              datum.height(), datum.width(), 1)
                              : PlanesToImage(datum.float_data().data(), CV_32FC1, datum.channels(),
                                              datum.height(), datum.width(), sizeof(float));
  return ForceChannels(image, param_);
}

void Transformer::ShorterSideResize(int* rows, int* cols) const {
  const int target = static_cast<int>(param_.resize_shorter_side());
  const int shorter = std::min(*rows, *cols);
  if (target <= 0 || shorter == target) return;
  const double factor = static_cast<double>(target) / shorter;
  const bool rows_shorter = *rows == shorter, cols_shorter = *cols == shorter;
  *rows = rows_shorter ? target : static_cast<int>(std::lround(*rows * factor));
  *cols = cols_shorter ? target : static_cast<int>(std::lround(*cols * factor));
}

cv::Mat Transformer::Prepare(const cv::Mat& image, RandomEngine* engine) const {
  cv::Mat out = ForceChannels(image, param_);
  if (out.depth() != CV_8U && out.depth() != CV_32F) {
    cv::Mat converted;
    out.convertTo(converted, CV_32F);
    out = converted;
  }
  int rows = out.rows, cols = out.cols;
  ShorterSideResize(&rows, &cols);
  if (rows != out.rows || cols != out.cols) {
    cv::Mat resized;
    cv::resize(out, resized, cv::Size(cols, rows), 0, 0, cv::INTER_LINEAR);
    out = resized;
  }
  if (engine != nullptr && RandomResizes()) out = RandomResize(out, engine);
  if (engine != nullptr && param_.random_resized_crop() && phase_ == TRAIN) {
    const CropRect rect =
        SampleResizedCrop(out.rows, out.cols, param_.rrc_min_area(), param_.rrc_max_area(),
                          param_.rrc_min_aspect(), param_.rrc_max_aspect(), engine);
    const int size = static_cast<int>(param_.crop_size());
    cv::Mat resized;
    cv::resize(out(cv::Rect(rect.x, rect.y, rect.width, rect.height)), resized,
               cv::Size(size, size), 0, 0, cv::INTER_LINEAR);
    out = resized;
  }
  return out;
}

std::vector<int64_t> Transformer::CroppedShape(int64_t channels, int64_t height,
                                               int64_t width) const {
  const int64_t crop = param_.crop_size();
  if (crop == 0) return {channels, height, width};
  if (height < crop || width < crop) {
    throw BadRecordError(StrCat("is ", height, "x", width, ", smaller than crop_size ", crop));
  }
  return {channels, crop, crop};
}

std::vector<int64_t> Transformer::OutputShape(const DatumView& datum) const {
  // A JPEG the fast path takes: its header says (and OpenCV's codecs, which
  // a bundle leaves out, are not needed).
  if (datum.encoded() && !datum.data().empty() &&
      ImageTruncation(datum.data(), datum.data()).empty()) {
    std::vector<int64_t> shape = JpegOutputShape(datum.data());
    if (!shape.empty()) return shape;
  }
  if (NeedsOpenCv(datum)) return OutputShape(DatumToImage(datum));
  CheckRawDatum(datum);
  return CroppedShape(datum.channels(), datum.height(), datum.width());
}

std::vector<int64_t> Transformer::OutputShape(const cv::Mat& image) const {
  const cv::Mat prepared = Prepare(image, nullptr);
  // A random resized crop turns any size into crop_size x crop_size; after
  // NVCaffe's random resize (at least crop_size a side) the crop does.
  if ((param_.random_resized_crop() && phase_ == TRAIN) || RandomResizes()) {
    return {prepared.channels(), param_.crop_size(), param_.crop_size()};
  }
  return CroppedShape(prepared.channels(), prepared.rows, prepared.cols);
}

void Transformer::CheckShape(const std::vector<int64_t>& got,
                             const std::vector<int64_t>& expected) const {
  if (got == expected) return;
  throw BadRecordError(
      StrCat("gives a ", Dims(got[0], got[1], got[2]), " image, but the batch holds ",
             Dims(expected[0], expected[1], expected[2]),
             " images (the first record's size); records of different sizes need a resize or crop "
             "(transform_param crop_size or resize_shorter_side, image_data_param new_height and "
             "new_width, or convert_imageset --resize_height/--resize_width)"));
}

void Transformer::Transform(const DatumView& datum, const std::vector<int64_t>& shape,
                            RandomEngine* engine, float* out) const {
  TransformDatum(datum, shape, engine, Output{out, nullptr});
}

void Transformer::Transform(const cv::Mat& image, const std::vector<int64_t>& shape,
                            RandomEngine* engine, float* out) const {
  TransformImage(image, shape, engine, Output{out, nullptr});
}

bool Transformer::DefersNormalization() const {
  const bool jitter = phase_ == TRAIN &&
                      (param_.brightness() > 0 || param_.contrast() > 0 || param_.saturation() > 0);
  return !jitter && mean_.empty();
}

PixelNormalization Transformer::Normalization(int64_t channels) const {
  const int num_values = param_.mean_value_size();
  DEMI_CHECK(num_values <= 1 || num_values == channels, owner_, ": transform_param has ",
             num_values, " mean_value entries for an image of ", channels,
             " channels; give 1 or one per channel");
  PixelNormalization normalization;
  normalization.scale = param_.scale();
  for (int64_t c = 0; c < channels; ++c) {
    normalization.mean.push_back(
        num_values == 0 ? 0.0f : param_.mean_value(num_values == 1 ? 0 : static_cast<int>(c)));
  }
  return normalization;
}

bool Transformer::TransformBytes(const DatumView& datum, const std::vector<int64_t>& shape,
                                 RandomEngine* engine, uint8_t* out) const {
  DEMI_CHECK(DefersNormalization(), owner_, ": TransformBytes with jitter or a mean_file");
  // Encoded images decode to bytes; raw Datums hold bytes or float_data.
  if (!datum.encoded() && !CheckRawDatum(datum)) return false;
  TransformDatum(datum, shape, engine, Output{nullptr, out});
  return true;
}

bool Transformer::TransformBytes(const cv::Mat& image, const std::vector<int64_t>& shape,
                                 RandomEngine* engine, uint8_t* out) const {
  DEMI_CHECK(DefersNormalization(), owner_, ": TransformBytes with jitter or a mean_file");
  if (image.depth() != CV_8U) return false;
  TransformImage(image, shape, engine, Output{nullptr, out});
  return true;
}

void Transformer::TransformDatum(const DatumView& datum, const std::vector<int64_t>& shape,
                                 RandomEngine* engine, const Output& out) const {
  // Truncated data fails here as DatumToImage would fail it.
  if (datum.encoded() && param_.fast_jpeg_decode() && !datum.data().empty() &&
      ImageTruncation(datum.data(), datum.data()).empty() &&
      TransformJpegTo(datum.data(), 0, shape, engine, out)) {
    return;
  }
  if (NeedsOpenCv(datum)) {
    TransformImage(DatumToImage(datum), shape, engine, out);
    return;
  }
  const int64_t c = datum.channels(), h = datum.height(), w = datum.width();
  if (CheckRawDatum(datum)) {
    const auto* pixels = reinterpret_cast<const uint8_t*>(datum.data().data());
    Finish(pixels, c, h, w, h * w, w, 1, shape, engine, out);
  } else {
    Finish(datum.float_data().data(), c, h, w, h * w, w, 1, shape, engine, out);
  }
}

void Transformer::TransformImage(const cv::Mat& image, const std::vector<int64_t>& shape,
                                 RandomEngine* engine, const Output& out) const {
  const cv::Mat prepared = Prepare(image, engine);
  const int64_t c = prepared.channels();
  const auto row_stride = static_cast<int64_t>(prepared.step1());
  if (prepared.depth() == CV_8U) {
    Finish(prepared.ptr<uint8_t>(), c, prepared.rows, prepared.cols, 1, row_stride, c, shape,
           engine, out);
  } else {
    Finish(prepared.ptr<float>(), c, prepared.rows, prepared.cols, 1, row_stride, c, shape, engine,
           out);
  }
}

Transformer::Window Transformer::ChooseWindow(int64_t height, int64_t width,
                                              const std::vector<int64_t>& shape,
                                              RandomEngine* engine) const {
  Window window;
  window.height = shape[1];
  window.width = shape[2];
  const int64_t crop = param_.crop_size();
  if (crop > 0) {
    if (phase_ == TRAIN) {
      window.top = RandomIndex(engine, static_cast<uint32_t>(height - crop + 1));
      window.left = RandomIndex(engine, static_cast<uint32_t>(width - crop + 1));
    } else {
      window.top = (height - crop) / 2;
      window.left = (width - crop) / 2;
    }
  }
  window.mirror = param_.mirror() && RandomIndex(engine, 2) == 1;
  return window;
}

namespace {

/// Step 4's copy: the window's pixels, mirrored if drawn so, C x H x W.
template <typename Pixel, typename Out>
void CopyWindow(const Pixel* pixels, int64_t channels, int64_t channel_stride, int64_t row_stride,
                int64_t column_stride, int64_t top, int64_t left, int64_t out_h, int64_t out_w,
                bool mirror, Out* out) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t h = 0; h < out_h; ++h) {
      const Pixel* row =
          pixels + c * channel_stride + (top + h) * row_stride + left * column_stride;
      Out* out_row = out + (c * out_h + h) * out_w;
      if (mirror) {
        for (int64_t w = 0; w < out_w; ++w) out_row[out_w - 1 - w] = row[w * column_stride];
      } else {
        for (int64_t w = 0; w < out_w; ++w) out_row[w] = row[w * column_stride];
      }
    }
  }
}

}  // namespace

template <typename Pixel>
void Transformer::Finish(const Pixel* pixels, int64_t channels, int64_t height, int64_t width,
                         int64_t channel_stride, int64_t row_stride, int64_t column_stride,
                         const std::vector<int64_t>& shape, RandomEngine* engine,
                         const Output& out) const {
  CHECK(engine != nullptr);
  CheckShape(CroppedShape(channels, height, width), shape);
  const Window window = ChooseWindow(height, width, shape, engine);
  if (out.bytes != nullptr) {
    // TransformBytes hands over byte pixels only.
    if constexpr (std::is_same_v<Pixel, uint8_t>) {
      CopyWindow(pixels, channels, channel_stride, row_stride, column_stride, window.top,
                 window.left, window.height, window.width, window.mirror, out.bytes);
      return;
    }
    LOG(FATAL) << owner_ << ": float pixels cannot be written as bytes";
  }
  CopyWindow(pixels, channels, channel_stride, row_stride, column_stride, window.top, window.left,
             window.height, window.width, window.mirror, out.floats);
  if (phase_ == TRAIN) {
    JitterColours(static_cast<int>(channels), window.height * window.width, engine, out.floats);
  }
  SubtractMeanAndScale(channels, height, width, window, out.floats);
}

void Transformer::JitterColours(int channels, int64_t spatial, RandomEngine* engine,
                                float* out) const {
  // Drawn in this order (brightness, contrast, saturation) for every record.
  if (param_.brightness() > 0) {
    const float b = param_.brightness();
    AdjustBrightness(RandomUniform(engine, std::max(0.0f, 1 - b), 1 + b), channels, spatial, out);
  }
  if (param_.contrast() > 0) {
    const float x = param_.contrast();
    AdjustContrast(RandomUniform(engine, std::max(0.0f, 1 - x), 1 + x), channels, spatial, out);
  }
  if (param_.saturation() > 0) {
    const float s = param_.saturation();
    AdjustSaturation(RandomUniform(engine, std::max(0.0f, 1 - s), 1 + s), channels, spatial, out);
  }
}

void Transformer::SubtractMeanAndScale(int64_t channels, int64_t height, int64_t width,
                                       const Window& window, float* out) const {
  const int64_t out_h = window.height, out_w = window.width, spatial = out_h * out_w;
  const float scale = param_.scale();
  if (!mean_.empty()) {
    DEMI_CHECK(mean_shape_ == std::vector<int64_t>({channels, height, width}), owner_,
               ": mean_file '", param_.mean_file(), "' is ",
               Dims(mean_shape_[0], mean_shape_[1], mean_shape_[2]),
               " but the image it applies to is ", Dims(channels, height, width));
    // The mean of the window's pixels, mirrored as they were.
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t h = 0; h < out_h; ++h) {
        const float* mean_row = mean_.data() + (c * height + window.top + h) * width + window.left;
        float* out_row = out + (c * out_h + h) * out_w;
        for (int64_t w = 0; w < out_w; ++w) {
          float& value = out_row[window.mirror ? out_w - 1 - w : w];
          value = (value - mean_row[w]) * scale;
        }
      }
    }
  } else if (param_.mean_value_size() > 0 || scale != 1.0f) {
    // NormalizeExample's arithmetic, in place (x - 0 is x: no mean, no change).
    const PixelNormalization normalization = Normalization(channels);
    for (int64_t c = 0; c < channels; ++c) {
      const float mean = normalization.mean[c];
      float* plane = out + c * spatial;
      for (int64_t i = 0; i < spatial; ++i) plane[i] = (plane[i] - mean) * scale;
    }
  }
}

}  // namespace demi
