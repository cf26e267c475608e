#include <gtest/gtest.h>

#include <cmath>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <set>
#include <tuple>

#include "data_test_util.hpp"
#include "demi/data/transformer.hpp"
#include "demi/util/io.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

Transformer MakeTransformer(const std::string& text, Phase phase = TEST) {
  return Transformer(ParseText<TransformationParameter>(text), phase, "Data layer 'd'");
}

/// Runs the transformer on a datum with record engine (seed 1, epoch 0, index).
std::vector<float> TransformDatum(const Transformer& transformer, const Datum& datum,
                                  int64_t index = 0) {
  const std::vector<int64_t> shape = transformer.OutputShape(datum);
  std::vector<float> out(shape[0] * shape[1] * shape[2], -1.0f);
  RandomEngine engine = RecordEngine(1, 0, index);
  transformer.Transform(datum, shape, &engine, out.data());
  return out;
}

/// A 1-channel H x W datum whose pixel (h, w) is 10 h + w.
Datum PositionDatum(int height, int width) {
  std::vector<uint8_t> pixels;
  for (int h = 0; h < height; ++h) {
    for (int w = 0; w < width; ++w) pixels.push_back(static_cast<uint8_t>(10 * h + w));
  }
  return RawDatum(1, height, width, pixels, 0);
}

TEST(TransformerTest, ScaleAndMeanValues) {
  const Datum datum = RawDatum(2, 2, 3, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 0);
  EXPECT_EQ(TransformDatum(MakeTransformer("scale: 0.5 mean_value: 1 mean_value: 2"), datum),
            (std::vector<float>{-0.5, 0, 0.5, 1, 1.5, 2, 2, 2.5, 3, 3.5, 4, 4.5}));
  EXPECT_EQ(TransformDatum(MakeTransformer("mean_value: 3"), datum),
            (std::vector<float>{-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(TransformDatum(MakeTransformer("scale: 0.00390625"), datum)[4], 4.0f / 256);
  EXPECT_EQ(TransformDatum(MakeTransformer(""), datum)[11], 11.0f);
}

TEST(TransformerTest, FloatDataDatum) {
  Datum datum;
  datum.set_channels(1);
  datum.set_height(1);
  datum.set_width(2);
  datum.add_float_data(0.5f);
  datum.add_float_data(-1.5f);
  EXPECT_EQ(TransformDatum(MakeTransformer("scale: 2"), datum), (std::vector<float>{1, -3}));
}

TEST(TransformerTest, CenterCropInTest) {
  // Rows 1-2, columns 1-2 of the 4 x 5 image.
  EXPECT_EQ(TransformDatum(MakeTransformer("crop_size: 2"), PositionDatum(4, 5)),
            (std::vector<float>{11, 12, 21, 22}));
  EXPECT_EQ(TransformDatum(MakeTransformer("crop_size: 3"), PositionDatum(3, 3)),
            (std::vector<float>{0, 1, 2, 10, 11, 12, 20, 21, 22}));
}

TEST(TransformerTest, MeanFileIsIndexedAtTheSourcePixel) {
  TempDir dir;
  BlobProto mean;
  mean.set_num(1);
  mean.set_channels(1);
  mean.set_height(4);
  mean.set_width(5);
  for (int h = 0; h < 4; ++h) {
    for (int w = 0; w < 5; ++w) mean.add_data(static_cast<float>(h));
  }
  WriteProtoToBinaryFile(mean, dir / "mean.binaryproto");
  const std::string param = "mean_file: '" + (dir / "mean.binaryproto") + "' crop_size: 2";
  EXPECT_EQ(TransformDatum(MakeTransformer(param), PositionDatum(4, 5)),
            (std::vector<float>{10, 11, 19, 20}));

  // A mean equal to the image minus 7: every output is 7 * scale, whatever
  // window and flip are drawn, only if the mean is read at the source pixel.
  mean.clear_data();
  for (int h = 0; h < 4; ++h) {
    for (int w = 0; w < 5; ++w) mean.add_data(static_cast<float>(10 * h + w - 7));
  }
  WriteProtoToBinaryFile(mean, dir / "mean2.binaryproto");
  const Transformer random = MakeTransformer(
      "mean_file: '" + (dir / "mean2.binaryproto") + "' crop_size: 3 mirror: true scale: 0.5",
      TRAIN);
  for (int64_t index = 0; index < 20; ++index) {
    EXPECT_EQ(TransformDatum(random, PositionDatum(4, 5), index), std::vector<float>(9, 3.5f));
  }
}

/// The (h_off, w_off, mirror) a 3 x 3 crop of PositionDatum shows, checking
/// that it is one window, flipped or not.
std::tuple<int, int, bool> DecodeWindow(const std::vector<float>& out) {
  const bool mirror = out[1] > out[2];
  const int corner = static_cast<int>(mirror ? out[2] : out[0]);
  const int h_off = corner / 10, w_off = corner % 10;
  for (int h = 0; h < 3; ++h) {
    for (int w = 0; w < 3; ++w) {
      const int source_w = mirror ? 2 - w : w;
      EXPECT_EQ(out[h * 3 + w], 10 * (h_off + h) + w_off + source_w);
    }
  }
  return {h_off, w_off, mirror};
}

TEST(TransformerTest, RandomCropAndMirrorAreKeyedByRecord) {
  const Transformer transformer = MakeTransformer("crop_size: 3 mirror: true", TRAIN);
  const Datum datum = PositionDatum(6, 7);
  std::set<std::tuple<int, int, bool>> windows;
  for (int64_t index = 0; index < 1000; ++index) {
    const std::vector<float> out = TransformDatum(transformer, datum, index);
    windows.insert(DecodeWindow(out));
    ASSERT_EQ(TransformDatum(transformer, datum, index), out) << "same record, same augmentation";
  }
  EXPECT_EQ(windows.size(), 4u * 5u * 2u) << "every window and flip occurs";

  // Another epoch or seed draws anew.
  int differ_epoch = 0, differ_seed = 0;
  for (int64_t index = 0; index < 20; ++index) {
    std::vector<float> a(9), b(9), c(9);
    RandomEngine ea = RecordEngine(1, 0, index), eb = RecordEngine(1, 1, index),
                 ec = RecordEngine(2, 0, index);
    transformer.Transform(datum, {1, 3, 3}, &ea, a.data());
    transformer.Transform(datum, {1, 3, 3}, &eb, b.data());
    transformer.Transform(datum, {1, 3, 3}, &ec, c.data());
    differ_epoch += a != b;
    differ_seed += a != c;
  }
  EXPECT_GT(differ_epoch, 10);
  EXPECT_GT(differ_seed, 10);
}

TEST(TransformerTest, RecordEngineDependsOnEveryPartOfTheKey) {
  const auto first = [](uint32_t seed, int64_t epoch, int64_t index) {
    RandomEngine engine = RecordEngine(seed, epoch, index);
    return engine();
  };
  EXPECT_EQ(first(5, 1, 2), first(5, 1, 2));
  EXPECT_NE(first(5, 1, 2), first(6, 1, 2));
  EXPECT_NE(first(5, 1, 2), first(5, 2, 2));
  EXPECT_NE(first(5, 1, 2), first(5, 1, 3));
  EXPECT_NE(first(5, 1, 2), first(5, 1, 2 + (int64_t{1} << 32)));
}

TEST(TransformerTest, TestPhaseTakesTheCenterAndNoJitter) {
  const Transformer transformer =
      MakeTransformer("crop_size: 3 brightness: 0.5 contrast: 0.5 saturation: 0.5", TEST);
  for (int64_t index = 0; index < 10; ++index) {
    EXPECT_EQ(TransformDatum(transformer, PositionDatum(5, 5), index),
              (std::vector<float>{11, 12, 13, 21, 22, 23, 31, 32, 33}));
  }
}

TEST(TransformerTest, ForceGrayAndForceColor) {
  // B, G, R = 10, 20, 30: gray 0.114 * 10 + 0.587 * 20 + 0.299 * 30 = 21.85.
  const Datum color = RawDatum(3, 1, 1, {10, 20, 30}, 0);
  EXPECT_EQ(TransformDatum(MakeTransformer("force_gray: true"), color), (std::vector<float>{22}));
  const Datum gray = RawDatum(1, 1, 2, {9, 200}, 0);
  EXPECT_EQ(TransformDatum(MakeTransformer("force_color: true"), gray),
            (std::vector<float>{9, 200, 9, 200, 9, 200}));
  EXPECT_EQ(MakeTransformer("force_color: true").OutputShape(gray),
            (std::vector<int64_t>{3, 1, 2}));
}

Datum EncodedDatum(const cv::Mat& image, const std::string& extension) {
  std::vector<uchar> bytes;
  EXPECT_TRUE(cv::imencode(extension, image, bytes));
  Datum datum;
  datum.set_data(bytes.data(), bytes.size());
  datum.set_encoded(true);
  return datum;
}

TEST(TransformerTest, DecodesEncodedDatums) {
  // A 2 x 2 BGR image; PNG is lossless.
  cv::Mat image(2, 2, CV_8UC3);
  for (int i = 0; i < 4; ++i) {
    image.at<cv::Vec3b>(i / 2, i % 2) =
        cv::Vec3b(static_cast<uchar>(i), static_cast<uchar>(10 + i), static_cast<uchar>(20 + i));
  }
  const Datum datum = EncodedDatum(image, ".png");
  const Transformer plain = MakeTransformer("");
  EXPECT_EQ(plain.OutputShape(datum), (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(TransformDatum(plain, datum),
            (std::vector<float>{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}));
  cv::Mat gray(1, 3, CV_8UC1);
  gray.at<uchar>(0, 0) = 0;
  gray.at<uchar>(0, 1) = 128;
  gray.at<uchar>(0, 2) = 255;
  const Datum gray_datum = EncodedDatum(gray, ".png");
  EXPECT_EQ(TransformDatum(plain, gray_datum), (std::vector<float>{0, 128, 255}));
  EXPECT_EQ(TransformDatum(MakeTransformer("force_color: true"), gray_datum),
            (std::vector<float>{0, 128, 255, 0, 128, 255, 0, 128, 255}));
  EXPECT_EQ(TransformDatum(MakeTransformer("force_gray: true"), datum).size(), 4u);
}

TEST(TransformerTest, ResizeShorterSide) {
  // 1 x 2 -> 2 x 4; bilinear with half-pixel centers gives 0, 25, 75, 100.
  const Datum datum = RawDatum(1, 1, 2, {0, 100}, 0);
  const Transformer transformer = MakeTransformer("resize_shorter_side: 2");
  EXPECT_EQ(transformer.OutputShape(datum), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(TransformDatum(transformer, datum),
            (std::vector<float>{0, 25, 75, 100, 0, 25, 75, 100}));
  // Already the right size: unchanged; then the center crop.
  EXPECT_EQ(
      TransformDatum(MakeTransformer("resize_shorter_side: 3 crop_size: 3"), PositionDatum(3, 5)),
      (std::vector<float>{1, 2, 3, 11, 12, 13, 21, 22, 23}));
}

// ---- NVCaffe's random resize and stretch (transformer_resize.cpp) ----

/// PositionDatum's pixels as an OpenCV image, resized to rows x cols with
/// `interpolation`, then the window at (top, left) of size x size, as floats.
std::vector<float> ResizedWindow(int height, int width, int rows, int cols, int interpolation,
                                 int top, int left, int size) {
  cv::Mat image(height, width, CV_8UC1);
  for (int h = 0; h < height; ++h) {
    for (int w = 0; w < width; ++w) image.at<uchar>(h, w) = static_cast<uchar>(10 * h + w);
  }
  cv::Mat resized;
  cv::resize(image, resized, cv::Size(cols, rows), 0, 0, interpolation);
  std::vector<float> out;
  for (int h = top; h < top + size; ++h) {
    for (int w = left; w < left + size; ++w) out.push_back(resized.at<uchar>(h, w));
  }
  return out;
}

TEST(TransformerTest, NvcaffeRandomResizeSetsTheShorterSideThenCrops) {
  // 6 x 9, shorter side to 4 (the range holds one length): 4 x 6 by INTER_AREA
  // (down), then TEST's central 4 x 4.
  const Transformer transformer = MakeTransformer(
      "img_rand_resize_lower: 4 img_rand_resize_upper: 4 crop_size: 4 "
      "interpolation_algo_down: INTER_AREA");
  EXPECT_EQ(transformer.OutputShape(PositionDatum(6, 9)), (std::vector<int64_t>{1, 4, 4}));
  EXPECT_EQ(TransformDatum(transformer, PositionDatum(6, 9)),
            ResizedWindow(6, 9, 4, 6, cv::INTER_AREA, 0, 1, 4));
}

TEST(TransformerTest, NvcaffeStretchUpscalesOnlyWhenAllowed) {
  // Height x 1.5: 9 x 9 by interpolation_algo_up with allow_upscale, then
  // the central 6 x 6; without it the height stays 6 and nothing resizes.
  const std::string stretch =
      "vertical_stretch_lower: 1.5 vertical_stretch_upper: 1.5 crop_size: 6 "
      "interpolation_algo_up: INTER_LINEAR ";
  EXPECT_EQ(TransformDatum(MakeTransformer(stretch + "allow_upscale: true"), PositionDatum(6, 9)),
            ResizedWindow(6, 9, 9, 9, cv::INTER_LINEAR, 1, 1, 6));
  EXPECT_EQ(TransformDatum(MakeTransformer(stretch), PositionDatum(6, 9)),
            ResizedWindow(6, 9, 6, 9, cv::INTER_NEAREST, 0, 1, 6));
  // A ratio of 1.2 for the longer side: 6 x 7 (7.2 rounded), by NEAREST (down).
  EXPECT_EQ(TransformDatum(MakeTransformer("rand_resize_ratio_lower: 1.2 "
                                           "rand_resize_ratio_upper: 1.2 crop_size: 6"),
                           PositionDatum(6, 9)),
            ResizedWindow(6, 9, 6, 7, cv::INTER_NEAREST, 0, 0, 6));
}

TEST(TransformerTest, NvcaffeRandomResizeIsKeyedByRecord) {
  const Transformer transformer = MakeTransformer(
      "img_rand_resize_lower: 8 img_rand_resize_upper: 20 crop_size: 8 allow_upscale: true "
      "interpolation_algo_up: INTER_LINEAR",
      TRAIN);
  const Datum datum = PositionDatum(10, 12);
  std::set<std::vector<float>> outputs;
  for (int64_t index = 0; index < 8; ++index) {
    const std::vector<float> out = TransformDatum(transformer, datum, index);
    EXPECT_EQ(out, TransformDatum(transformer, datum, index));
    outputs.insert(out);
  }
  EXPECT_GT(outputs.size(), 4u);  // 13 lengths and the crops' offsets
}

TEST(TransformerTest, NvcaffeRandomResizeNeedsACropAndBothBounds) {
  ExpectErrorContaining(
      [] { MakeTransformer("img_rand_resize_lower: 4 img_rand_resize_upper: 8"); },
      {"Data layer 'd'", "needs crop_size"});
  ExpectErrorContaining([] { MakeTransformer("vertical_stretch_lower: 0.9"); },
                        {"needs crop_size"});
  ExpectErrorContaining([] { MakeTransformer("img_rand_resize_lower: 4 crop_size: 2"); },
                        {"both of img_rand_resize_lower and _upper"});
  ExpectErrorContaining(
      [] { MakeTransformer("img_rand_resize_lower: 8 img_rand_resize_upper: 4 crop_size: 2"); },
      {"lower <= upper, got 8 and 4"});
}

TEST(TransformerTest, NvcaffeRandomResizeSkipsTheFastJpegPath) {
  cv::Mat image(16, 16, CV_8UC3, cv::Scalar(10, 20, 30));
  const Datum datum = EncodedDatum(image, ".jpg");
  const Transformer transformer =
      MakeTransformer("img_rand_resize_lower: 8 img_rand_resize_upper: 12 crop_size: 8", TRAIN);
  std::vector<float> out(3 * 8 * 8);
  RandomEngine engine = RecordEngine(1, 0, 0);
  EXPECT_FALSE(transformer.TransformJpeg(datum.data(), 0, {3, 8, 8}, &engine, out.data()));
  EXPECT_EQ(TransformDatum(transformer, datum).size(), out.size());  // the OpenCV path
}

TEST(TransformerTest, SampleResizedCropStaysInRange) {
  RandomEngine engine(3);
  for (int i = 0; i < 2000; ++i) {
    const CropRect rect = SampleResizedCrop(100, 200, 0.08f, 1.0f, 0.75f, 4.0f / 3, &engine);
    ASSERT_GE(rect.y, 0);
    ASSERT_GE(rect.x, 0);
    ASSERT_LE(rect.y + rect.height, 100);
    ASSERT_LE(rect.x + rect.width, 200);
    const double area = static_cast<double>(rect.height) * rect.width / (100.0 * 200.0);
    const double aspect = static_cast<double>(rect.width) / rect.height;
    // Rounding the sides to integers moves area and aspect a little.
    ASSERT_GE(area, 0.08 * 0.9);
    ASSERT_LE(area, 1.0);
    ASSERT_GE(aspect, 0.75 * 0.9);
    ASSERT_LE(aspect, 4.0 / 3 * 1.1);
  }
  // Nothing fits a full-area square in 100 x 200: the central 100 x 100.
  const CropRect fallback = SampleResizedCrop(100, 200, 1.0f, 1.0f, 1.0f, 1.0f, &engine);
  EXPECT_EQ(std::make_tuple(fallback.y, fallback.x, fallback.height, fallback.width),
            std::make_tuple(0, 50, 100, 100));
}

TEST(TransformerTest, RandomResizedCropOutputsCropSize) {
  const Datum datum = RawDatum(3, 20, 30, std::vector<uint8_t>(3 * 20 * 30, 77), 0);
  const Transformer train = MakeTransformer("random_resized_crop: true crop_size: 8", TRAIN);
  EXPECT_EQ(train.OutputShape(datum), (std::vector<int64_t>{3, 8, 8}));
  EXPECT_EQ(TransformDatum(train, datum, 4), std::vector<float>(3 * 8 * 8, 77.0f));
  // In TEST, the center crop of crop_size.
  const Transformer test = MakeTransformer("random_resized_crop: true crop_size: 2");
  EXPECT_EQ(TransformDatum(test, PositionDatum(4, 4)), (std::vector<float>{11, 12, 21, 22}));
}

TEST(TransformerTest, ColorJitterOperations) {
  std::vector<float> values = {10, 100, 200};
  AdjustBrightness(1.5f, 1, 3, values.data());
  EXPECT_EQ(values, (std::vector<float>{15, 150, 255}));

  values = {0, 100, 50, 250};  // mean 100
  AdjustContrast(0.5f, 1, 4, values.data());
  EXPECT_EQ(values, (std::vector<float>{50, 100, 75, 175}));

  // Two BGR pixels, gray 100 and 0: mean 50; x <- 2 x - 50.
  values = {100, 0, 100, 0, 100, 0};
  AdjustContrast(2.0f, 3, 2, values.data());
  EXPECT_EQ(values, (std::vector<float>{150, 0, 150, 0, 150, 0}));

  values = {10, 20, 30};  // B, G, R of one pixel; gray 21.85
  AdjustSaturation(0.0f, 3, 1, values.data());
  for (float v : values) EXPECT_NEAR(v, 21.85f, 1e-4);
  values = {10, 20, 30};
  AdjustSaturation(2.0f, 3, 1, values.data());  // 2 x - 21.85, clamped at 0
  EXPECT_EQ(values[0], 0.0f);
  EXPECT_NEAR(values[1], 18.15f, 1e-4);
  EXPECT_NEAR(values[2], 38.15f, 1e-4);
  values = {10, 20, 30};  // one channel: unchanged
  AdjustSaturation(0.0f, 1, 3, values.data());
  EXPECT_EQ(values, (std::vector<float>{10, 20, 30}));
}

TEST(TransformerTest, BrightnessJitterScalesByTheDrawnFactor) {
  const Datum datum = RawDatum(1, 1, 2, {100, 40}, 0);
  const Transformer transformer = MakeTransformer("brightness: 0.4", TRAIN);
  std::set<float> factors;
  for (int64_t index = 0; index < 50; ++index) {
    const std::vector<float> out = TransformDatum(transformer, datum, index);
    const float factor = out[0] / 100;
    EXPECT_GE(factor, 0.6f);
    EXPECT_LT(factor, 1.4f);
    EXPECT_NEAR(out[1], 40 * factor, 1e-4);
    factors.insert(factor);
  }
  EXPECT_GT(factors.size(), 40u);
}

TEST(TransformerTest, BadRecordsThrowBadRecordError) {
  const Transformer plain = MakeTransformer("");
  Datum garbage;
  garbage.set_data("not an image");
  garbage.set_encoded(true);
  std::vector<float> out(64);
  RandomEngine engine(1);
  EXPECT_THROW(plain.OutputShape(garbage), BadRecordError);
  ExpectErrorContaining([&] { plain.OutputShape(garbage); },
                        {"does not decode as an image (12 bytes of encoded data)"});
  Datum empty_encoded;
  empty_encoded.set_encoded(true);
  ExpectErrorContaining([&] { plain.OutputShape(empty_encoded); },
                        {"is marked encoded but holds no data"});
  const Datum short_raw = RawDatum(1, 2, 3, {1, 2, 3, 4, 5}, 0);
  ExpectErrorContaining(
      [&] {
        plain.Transform(short_raw, {1, 2, 3}, &engine, out.data());
      },
      {"holds 5 bytes of pixel data, but its dimensions 1x2x3 need 6"});
  ExpectErrorContaining([&] { plain.OutputShape(RawDatum(1, 0, 3, {}, 0)); },
                        {"has dimensions 1x0x3"});
  Datum no_pixels = RawDatum(1, 1, 1, {}, 0);
  ExpectErrorContaining([&] { plain.OutputShape(no_pixels); }, {"holds no pixel data"});
  ExpectErrorContaining(
      [&] {
        plain.Transform(PositionDatum(3, 3), {1, 2, 3}, &engine, out.data());
      },
      {"gives a 1x3x3 image, but the batch holds 1x2x3 images", "crop_size"});
  const Transformer crop = MakeTransformer("crop_size: 4");
  ExpectErrorContaining(
      [&] {
        crop.Transform(PositionDatum(2, 3), {1, 4, 4}, &engine, out.data());
      },
      {"is 2x3, smaller than crop_size 4"});
}

// The datum_transform fuzz target found dimensions whose product overflowed
// int64 (undefined behaviour) before the size check; beside it, more
// channels than OpenCV's merge takes escaped as a cv::Exception.
TEST(TransformerTest, HugeDimensionsAndChannelCountsAreBadRecords) {
  const Transformer plain = MakeTransformer("");
  Datum huge = RawDatum(1717247, 1149833764, 8064, {1, 2}, 0);
  ExpectErrorContaining([&] { plain.OutputShape(huge); },
                        {"has dimensions 1717247x1149833764x8064, whose product overflows"});
  const Datum wide = RawDatum(600, 1, 1, std::vector<uint8_t>(600, 5), 0);
  EXPECT_EQ(plain.OutputShape(wide), (std::vector<int64_t>{600, 1, 1}));
  const Transformer gray = MakeTransformer("force_gray: true");
  ExpectErrorContaining([&] { gray.OutputShape(wide); }, {"has 600 channels", "at most 512"});
}

TEST(TransformerTest, ParameterErrorsNameTheOwner) {
  ExpectErrorContaining([] { MakeTransformer("mean_file: 'm' mean_value: 1"); },
                        {"Data layer 'd'", "both mean_file and mean_value"});
  ExpectErrorContaining([] { MakeTransformer("force_color: true force_gray: true"); },
                        {"Data layer 'd'", "both force_color and force_gray"});
  ExpectErrorContaining([] { MakeTransformer("random_resized_crop: true"); },
                        {"Data layer 'd'", "random_resized_crop needs crop_size"});
  ExpectErrorContaining([] { MakeTransformer("rrc_min_area: 0.5 rrc_max_area: 0.4"); },
                        {"rrc_min_area <= rrc_max_area"});
  ExpectErrorContaining([] { MakeTransformer("brightness: -1"); }, {"must be >= 0"});
  ExpectErrorContaining([] { MakeTransformer("mean_file: '/nonexistent/mean.binaryproto'"); },
                        {"Data layer 'd'", "mean_file", "/nonexistent/mean.binaryproto"});
  const Transformer two_means = MakeTransformer("mean_value: 1 mean_value: 2");
  ExpectErrorContaining(
      [&] {
        TransformDatum(two_means, RawDatum(3, 1, 1, {1, 2, 3}, 0));
      },
      {"Data layer 'd'", "2 mean_value entries for an image of 3 channels"});

  TempDir dir;
  BlobProto mean;
  mean.mutable_shape()->add_dim(1);
  mean.mutable_shape()->add_dim(2);
  mean.mutable_shape()->add_dim(2);
  for (int i = 0; i < 4; ++i) mean.add_data(0);
  WriteProtoToBinaryFile(mean, dir / "mean.binaryproto");
  const Transformer with_mean = MakeTransformer("mean_file: '" + (dir / "mean.binaryproto") + "'");
  ExpectErrorContaining([&] { TransformDatum(with_mean, PositionDatum(3, 3)); },
                        {"Data layer 'd'", "is 1x2x2 but the image it applies to is 1x3x3"});
}

}  // namespace
}  // namespace demi
