#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <fstream>
#include <iterator>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "data_test_util.hpp"
#include "demi/data/jpeg_region.hpp"
#include "demi/data/transformer.hpp"
#include "demi/layers/data_layer.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

const char kDocData[] = "/usr/share/doc/opencv-doc/examples/data/";

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// opencv-doc's photos of ImageNet-like sizes (empty when not installed).
std::vector<std::string> Photos() {
  std::vector<std::string> found;
  for (const char* name : {"baboon.jpg", "fruits.jpg", "messi5.jpg", "butterfly.jpg"}) {
    const std::string path = std::string(kDocData) + name;
    if (std::filesystem::exists(path)) found.push_back(ReadBytes(path));
  }
  return found;
}

std::string Encode(const cv::Mat& image, std::vector<int> params) {
  std::vector<uchar> bytes;
  EXPECT_TRUE(cv::imencode(".jpg", image, bytes, params));
  return std::string(bytes.begin(), bytes.end());
}

cv::Mat Imdecode(const std::string& data, int flags) {
  return cv::imdecode(
      cv::Mat(1, static_cast<int>(data.size()), CV_8U, const_cast<char*>(data.data())), flags);
}

int64_t DifferentPixels(const cv::Mat& a, const cv::Mat& b) {
  if (a.size() != b.size() || a.type() != b.type()) return -1;
  cv::Mat diff;
  cv::absdiff(a, b, diff);
  return cv::countNonZero(diff.reshape(1));
}

/// JPEGs of every kind the region decode handles: real photos, a
/// progressive one, a 4:4:4 one, and a one-component (gray) one.
std::vector<std::string> Variety() {
  std::vector<std::string> jpegs = Photos();
  if (jpegs.empty()) return jpegs;
  const cv::Mat photo = Imdecode(jpegs[0], cv::IMREAD_COLOR);
  jpegs.push_back(Encode(photo, {cv::IMWRITE_JPEG_PROGRESSIVE, 1, cv::IMWRITE_JPEG_QUALITY, 90}));
  // Luma and chroma qualities that differ make OpenCV's encoder write 4:4:4.
  jpegs.push_back(
      Encode(photo, {cv::IMWRITE_JPEG_LUMA_QUALITY, 90, cv::IMWRITE_JPEG_CHROMA_QUALITY, 85}));
  cv::Mat gray;
  cv::cvtColor(photo, gray, cv::COLOR_BGR2GRAY);
  jpegs.push_back(Encode(gray, {cv::IMWRITE_JPEG_QUALITY, 90}));
  return jpegs;
}

TEST(JpegRegionTest, HeaderGivesTheSizeWithoutDecoding) {
  const std::vector<std::string> jpegs = Variety();
  if (jpegs.empty()) GTEST_SKIP() << "opencv-doc is not installed";
  for (const std::string& data : jpegs) {
    JpegHeader header;
    ASSERT_TRUE(ReadJpegHeader(data, &header));
    const cv::Mat image = Imdecode(data, cv::IMREAD_ANYCOLOR);
    EXPECT_EQ(header.height, image.rows);
    EXPECT_EQ(header.width, image.cols);
    EXPECT_EQ(header.components, image.channels());
    EXPECT_EQ(header.orientation, 1);
  }
  EXPECT_TRUE(jpegs[jpegs.size() - 3].size() > 0);
  JpegHeader header;
  ASSERT_TRUE(ReadJpegHeader(jpegs[jpegs.size() - 3], &header));
  EXPECT_TRUE(header.progressive);
  EXPECT_FALSE(ReadJpegHeader("\x89PNG\r\n\x1A\n", &header));
  ExpectErrorContaining([&] { ReadJpegHeader(std::string("\xFF\xD8\xFF\xE0garbage"), &header); },
                        {"does not decode as an image: ", "(11 bytes of encoded data)"});
}

TEST(JpegRegionTest, ScaleIsTheSmallestThatCoversTheOutput) {
  EXPECT_EQ(JpegScaleFor(448, 448, 224, 224), 4);
  EXPECT_EQ(JpegScaleFor(449, 500, 224, 224), 4);
  EXPECT_EQ(JpegScaleFor(447, 500, 224, 224), 8);  // 447 * 4 / 8 < 224
  EXPECT_EQ(JpegScaleFor(1000, 447, 224, 224), 8);
  EXPECT_EQ(JpegScaleFor(900, 1000, 224, 224), 2);
  EXPECT_EQ(JpegScaleFor(224, 224, 224, 224), 8);
  EXPECT_EQ(JpegScaleFor(100, 100, 224, 224), 8);  // upsampled in full as before
  EXPECT_EQ(JpegScaleFor(1792, 2000, 224, 224), 1);
  EXPECT_EQ(JpegScaleFor(1791, 2000, 224, 224), 2);
}

TEST(JpegRegionTest, FullScaleRegionIsImdecodesCropExactly) {
  const std::vector<std::string> jpegs = Variety();
  if (jpegs.empty()) GTEST_SKIP() << "opencv-doc is not installed";
  std::mt19937 engine(3);
  for (size_t k = 0; k < jpegs.size(); ++k) {
    const std::string& data = jpegs[k];
    for (int channels : {3, 1}) {
      const cv::Mat full = Imdecode(data, channels == 3 ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE);
      std::vector<CropRect> rects = {
          {0, 0, full.rows, full.cols}, {full.rows - 7, full.cols - 13, 7, 13}, {0, 0, 1, 1}};
      for (int r = 0; r < 12; ++r) {
        CropRect rect;
        rect.height = 1 + static_cast<int>(engine() % full.rows);
        rect.width = 1 + static_cast<int>(engine() % full.cols);
        rect.y = static_cast<int>(engine() % (full.rows - rect.height + 1));
        rect.x = static_cast<int>(engine() % (full.cols - rect.width + 1));
        rects.push_back(rect);
      }
      for (const CropRect& rect : rects) {
        const JpegRegion region = DecodeJpegRegion(data, rect, 8, channels);
        EXPECT_EQ(region.top, rect.y);
        EXPECT_EQ(region.left, rect.x);
        const cv::Mat expected = full(cv::Rect(rect.x, rect.y, rect.width, rect.height));
        EXPECT_EQ(DifferentPixels(region.image, expected), 0)
            << "JPEG " << k << ", " << channels << " channel(s), rect y " << rect.y << " x "
            << rect.x << " " << rect.height << " x " << rect.width;
      }
    }
  }
}

TEST(JpegRegionTest, ScaledRegionIsTheScaledRectsCover) {
  const std::vector<std::string> jpegs = Variety();
  if (jpegs.empty()) GTEST_SKIP() << "opencv-doc is not installed";
  for (const std::string& data : jpegs) {
    JpegHeader header;
    ASSERT_TRUE(ReadJpegHeader(data, &header));
    const CropRect rect{37, 51, header.height / 2, header.width / 3};
    for (int m : {1, 3, 4, 7}) {
      const JpegRegion region = DecodeJpegRegion(data, rect, m, 3);
      EXPECT_EQ(region.scaled_height, (header.height * m + 7) / 8);
      EXPECT_EQ(region.scaled_width, (header.width * m + 7) / 8);
      EXPECT_EQ(region.top, rect.y * m / 8);
      EXPECT_EQ(region.left, rect.x * m / 8);
      EXPECT_EQ(region.image.rows, ((rect.y + rect.height) * m + 7) / 8 - region.top);
      EXPECT_EQ(region.image.cols, ((rect.x + rect.width) * m + 7) / 8 - region.left);
      // The same pixels as libjpeg's whole scaled image (no crop, no skip).
      const JpegRegion whole =
          DecodeJpegRegion(data, CropRect{0, 0, header.height, header.width}, m, 3);
      const cv::Mat expected =
          whole.image(cv::Rect(region.left, region.top, region.image.cols, region.image.rows));
      EXPECT_EQ(DifferentPixels(region.image, expected), 0) << "scale " << m << "/8";
    }
  }
}

Transformer MakeTransformer(const std::string& text, Phase phase, bool fast) {
  TransformationParameter param = ParseText<TransformationParameter>(text);
  param.set_fast_jpeg_decode(fast);
  return Transformer(param, phase, "Data layer 'd'");
}

Datum JpegDatum(const std::string& data) {
  Datum datum;
  datum.set_data(data);
  datum.set_encoded(true);
  return datum;
}

/// Differences between the fast path's outputs and the full decode's, over
/// records 0..records-1 of every JPEG; checks both drew alike.
struct Difference {
  double mean = 0;
  float max = 0;
};

Difference CompareWithFullDecode(const std::vector<std::string>& jpegs, const std::string& text,
                                 Phase phase, int records) {
  const Transformer fast = MakeTransformer(text, phase, true);
  const Transformer full = MakeTransformer(text, phase, false);
  double sum = 0;
  int64_t count = 0;
  Difference difference;
  for (const std::string& data : jpegs) {
    const Datum datum = JpegDatum(data);
    const std::vector<int64_t> shape = full.OutputShape(datum);
    const int64_t size = shape[0] * shape[1] * shape[2];
    for (int index = 0; index < records; ++index) {
      std::vector<float> a(size), b(size);
      RandomEngine engine_a = RecordEngine(5, 0, index), engine_b = RecordEngine(5, 0, index);
      fast.Transform(datum, shape, &engine_a, a.data());
      full.Transform(datum, shape, &engine_b, b.data());
      EXPECT_EQ(engine_a(), engine_b()) << "the two paths drew differently; " << text;
      for (int64_t i = 0; i < size; ++i) {
        const float d = std::abs(a[i] - b[i]);
        sum += d;
        difference.max = std::max(difference.max, d);
      }
      count += size;
    }
  }
  difference.mean = sum / static_cast<double>(count);
  return difference;
}

// The fast path takes a JPEG's shape from its header (no decode, and no
// OpenCV codecs, which a bundle leaves out): the decoded image's.
TEST(JpegRegionTest, OutputShapeFromTheHeaderIsTheDecodedOnes) {
  const std::vector<std::string> jpegs = Variety();
  if (jpegs.empty()) GTEST_SKIP() << "opencv-doc is not installed";
  for (const char* text : {"", "crop_size: 97", "random_resized_crop: true crop_size: 64",
                           "resize_shorter_side: 100 crop_size: 90", "force_gray: true",
                           "force_color: true crop_size: 32"}) {
    for (Phase phase : {TRAIN, TEST}) {
      const Transformer fast = MakeTransformer(text, phase, true);
      const Transformer full = MakeTransformer(text, phase, false);
      for (const std::string& data : jpegs) {
        const Datum datum = JpegDatum(data);
        EXPECT_EQ(fast.OutputShape(datum), full.OutputShape(datum)) << text;
      }
    }
  }
}

TEST(JpegRegionTest, FastPathWithoutResizeIsBitIdentical) {
  const std::vector<std::string> jpegs = Variety();
  if (jpegs.empty()) GTEST_SKIP() << "opencv-doc is not installed";
  for (const char* text : {"crop_size: 97 mirror: true", "crop_size: 97 force_color: true",
                           "crop_size: 64 force_gray: true mean_value: 3 scale: 0.5", ""}) {
    for (Phase phase : {TRAIN, TEST}) {
      const Difference d = CompareWithFullDecode(jpegs, text, phase, 2);
      EXPECT_EQ(d.max, 0.0f) << text;
    }
  }
}

// OpenCV's warp takes sides below SHRT_MAX: a wider JPEG (found by
// make fuzz) takes the full decode instead of throwing from the warp.
TEST(JpegRegionTest, AJpegWiderThanTheWarpTakesGoesToTheFullDecode) {
  cv::Mat wide(4, SHRT_MAX + 1, CV_8UC1);
  cv::randu(wide, 0, 256);
  Datum datum;
  datum.set_encoded(true);
  datum.set_data(Encode(wide, {cv::IMWRITE_JPEG_QUALITY, 90}));
  for (const char* text : {"", "mirror: true", "resize_shorter_side: 2"}) {
    TransformationParameter fast = ParseText<TransformationParameter>(text);
    TransformationParameter full = fast;
    full.set_fast_jpeg_decode(false);
    const Transformer with_fast(fast, TRAIN, "fast"), with_full(full, TRAIN, "full");
    const std::vector<int64_t> shape = with_fast.OutputShape(datum);
    EXPECT_EQ(shape, with_full.OutputShape(datum)) << text;
    std::vector<float> a(static_cast<size_t>(shape[0] * shape[1] * shape[2]));
    std::vector<float> b(a.size());
    RandomEngine engine_a = RecordEngine(1, 0, 0), engine_b = RecordEngine(1, 0, 0);
    with_fast.Transform(datum, shape, &engine_a, a.data());
    with_full.Transform(datum, shape, &engine_b, b.data());
    EXPECT_EQ(a, b) << text;
  }
}

// The tolerances README.md states ("Fast JPEG decode"), in pixel levels
// (0-255) over opencv-doc's photos and the variants above. At scale 8/8 a
// random resized crop is bit-identical; where one warp replaces two
// cv::resize calls (shorter side + crop) it differs by up to a few levels;
// at 4/8 the DCT's low-pass differs from bilinear point sampling at
// sharp edges (measured: shorter side 256 + crop 224, mostly at 4/8, mean
// 1.0, max 34; RandomResizedCrop 224 forced to 4/8, mean 6.3, max 163). A
// wrong crop, scale or mirror gives means of 20 and more.
TEST(JpegRegionTest, FastPathIsWithinToleranceOfTheFullDecode) {
  const std::vector<std::string> jpegs = Variety();
  if (jpegs.empty()) GTEST_SKIP() << "opencv-doc is not installed";
  // Crops of at most 0.1 of 512 x 512 (162 pixels a side) decode at 8/8,
  // where the fast path resizes as Transform does: bit-identical, the mean
  // and scale included ((x - m) s on both paths).
  const Difference full_scale = CompareWithFullDecode(
      jpegs, "random_resized_crop: true crop_size: 224 mirror: true rrc_max_area: 0.1", TRAIN, 3);
  EXPECT_EQ(full_scale.max, 0.0f);
  const Difference scaled = CompareWithFullDecode(
      jpegs,
      "random_resized_crop: true crop_size: 224 mirror: true rrc_max_area: 0.1 mean_value: 104 "
      "scale: 0.017",
      TRAIN, 2);
  EXPECT_EQ(scaled.max, 0.0f);
  const Difference rrc = CompareWithFullDecode(
      jpegs, "random_resized_crop: true crop_size: 224 mirror: true", TRAIN, 6);
  EXPECT_LT(rrc.mean, 1.0);
  EXPECT_LE(rrc.max, 160.0f);
  const Difference shorter = CompareWithFullDecode(
      jpegs, "resize_shorter_side: 256 crop_size: 224 mirror: true", TRAIN, 3);
  EXPECT_LT(shorter.mean, 2.0);
  EXPECT_LE(shorter.max, 100.0f);
  const Difference test = CompareWithFullDecode(
      jpegs, "resize_shorter_side: 256 crop_size: 224 mean_value: 100 scale: 0.5", TEST, 1);
  EXPECT_LT(test.mean, 0.5 * 2.0);  // scale 0.5: half the pixel-level difference
  EXPECT_LE(test.max, 0.5f * 100);
  std::printf(
      "fast vs full decode, pixel levels: 8/8 mean %.3f max %.0f; RandomResizedCrop 224 "
      "mean %.3f max %.0f; shorter side 256 + crop 224 mean %.3f max %.0f; TEST centre crop "
      "mean %.3f max %.0f\n",
      full_scale.mean, full_scale.max, rrc.mean, rrc.max, shorter.mean, shorter.max, 2 * test.mean,
      2 * test.max);
}

/// An LMDB of encoded records: good, truncated, header-corrupt, good
/// (labels 0 to 3).
void WriteBadJpegDB(const std::string& path, const std::string& good) {
  std::vector<Datum> datums = {JpegDatum(good), JpegDatum(good.substr(0, good.size() / 2)),
                               JpegDatum(std::string("\xFF\xD8\xFF\xDBnot a table\xFF\xD9")),
                               JpegDatum(good)};
  for (int i = 0; i < 4; ++i) datums[i].set_label(i);
  WriteDatumDB(path, datums);
}

std::unique_ptr<Layer> MakeDataLayer(const std::string& source, bool skip) {
  auto layer = MakeLayer(
      "name: 'd' type: 'Data' phase: TRAIN transform_param { random_resized_crop: true "
      "crop_size: 32 mirror: true } data_param { source: '" +
      source + "' backend: LMDB batch_size: 2 prefetch: 1 skip_bad_records: " +
      (skip ? "true" : "false") + " }");
  Context context;
  context.seed = 3;
  layer->set_context(context);
  return layer;
}

TEST(JpegRegionTest, BadJpegRecordsAreNamedOrSkipped) {
  const std::vector<std::string> photos = Photos();
  if (photos.empty()) GTEST_SKIP() << "opencv-doc is not installed";
  TempDir dir;
  WriteBadJpegDB(dir / "db", photos[0]);
  Blob data, label;
  std::vector<Blob*> top{&data, &label};
  auto failing = MakeDataLayer(dir / "db", false);
  failing->SetUp({}, top);
  ExpectErrorContaining([&] { failing->Forward({}, top); },
                        {"Data layer 'd'", "record '00000001' (index 1)", "is a truncated JPEG",
                         "skip_bad_records: true"});
  // Past the truncated record: the corrupt header is named with libjpeg's reason.
  std::vector<Datum> rest = {JpegDatum(photos[0]),
                             JpegDatum(std::string("\xFF\xD8\xFF\xDBnot a table\xFF\xD9"))};
  WriteDatumDB(dir / "corrupt", rest);
  auto corrupt = MakeDataLayer(dir / "corrupt", false);
  corrupt->SetUp({}, top);
  ExpectErrorContaining([&] { corrupt->Forward({}, top); },
                        {"record '00000001' (index 1)", "does not decode as an image: "});

  auto skipping = MakeDataLayer(dir / "db", true);
  skipping->SetUp({}, top);
  skipping->Forward({}, top);
  EXPECT_EQ(DataOf(label), (std::vector<float>{0, 3}));
  EXPECT_GE(static_cast<DataLayer*>(skipping.get())->skipped_records(), 2);
}

/// The batch an ImageData layer over opencv-doc's photos gives, fast path on or off.
std::vector<float> ImageDataBatch(const std::string& list, const std::string& transform, bool fast,
                                  std::vector<float>* labels) {
  auto layer = MakeLayer("name: 'images' type: 'ImageData' phase: TRAIN transform_param { " +
                         transform + " fast_jpeg_decode: " + (fast ? "true" : "false") +
                         " } image_data_param { source: '" + list + "' root_folder: '" + kDocData +
                         "' batch_size: 4 }");
  Context context;
  context.seed = 11;
  layer->set_context(context);
  Blob data, label;
  std::vector<Blob*> top{&data, &label};
  layer->SetUp({}, top);
  layer->Forward({}, top);
  *labels = DataOf(label);
  return DataOf(data);
}

TEST(JpegRegionTest, ImageDataTakesTheFastPathWithTheSameDraws) {
  if (Photos().size() < 4) GTEST_SKIP() << "opencv-doc is not installed";
  TempDir dir;
  WriteFile(dir / "list.txt", "baboon.jpg 0\nfruits.jpg 1\nmessi5.jpg 2\nbutterfly.jpg 3\n");
  std::vector<float> fast_labels, full_labels;
  // Resized crops at 8/8: bit-identical, so the same draws.
  const std::string rrc = "random_resized_crop: true crop_size: 96 rrc_max_area: 0.1 mirror: true";
  EXPECT_EQ(ImageDataBatch(dir / "list.txt", rrc, true, &fast_labels),
            ImageDataBatch(dir / "list.txt", rrc, false, &full_labels));
  EXPECT_EQ(fast_labels, full_labels);
  // A shorter-side resize and random crop: one warp, so within tolerance and not equal.
  const std::string shorter = "resize_shorter_side: 256 crop_size: 96 mirror: true";
  const std::vector<float> fast = ImageDataBatch(dir / "list.txt", shorter, true, &fast_labels);
  const std::vector<float> full = ImageDataBatch(dir / "list.txt", shorter, false, &full_labels);
  ASSERT_EQ(fast.size(), full.size());
  double sum = 0;
  for (size_t i = 0; i < fast.size(); ++i) sum += std::abs(fast[i] - full[i]);
  EXPECT_LT(sum / static_cast<double>(fast.size()), 2.0);
  EXPECT_NE(fast, full);
}

}  // namespace
}  // namespace demi
