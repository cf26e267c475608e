// Byte batches (base_data_layer.hpp): where the transform's mean and scale
// can wait, the Data and ImageData layers carry bytes from the decode
// threads and normalise them in Forward, on the CPU or (GpuByteBatchesTest,
// skipped without a device) on a GPU. Every row must equal the float
// path's, Transformer::Transform with the record's engine, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <opencv2/imgcodecs.hpp>
#include <tuple>

#include "data_test_util.hpp"
#include "demi/data/byte_pixels.hpp"
#include "demi/layers/base_data_layer.hpp"
#include "demi/net.hpp"
#include "demi/util/io.hpp"
#include "demi/util/threads.hpp"
#include "gpu_test_util.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

constexpr uint32_t kSeed = 1701;

/// An 8-bit BGR picture of `rows` x `cols`: smooth gradients with noise, so
/// JPEG coding, crops and resizes all change values.
cv::Mat Picture(int rows, int cols, int seed) {
  std::mt19937 engine(seed);
  cv::Mat image(rows, cols, CV_8UC3);
  for (int h = 0; h < rows; ++h) {
    for (int w = 0; w < cols; ++w) {
      for (int c = 0; c < 3; ++c) {
        const int value = (h * 7 + w * (3 + c) + seed * 31) % 200 + static_cast<int>(engine() % 56);
        image.at<cv::Vec3b>(h, w)[c] = static_cast<uchar>(value);
      }
    }
  }
  return image;
}

Datum EncodedDatum(const cv::Mat& image, const std::string& extension, int label) {
  std::vector<uchar> encoded;
  EXPECT_TRUE(cv::imencode(extension, image, encoded));
  Datum datum;
  datum.set_data(std::string(encoded.begin(), encoded.end()));
  datum.set_encoded(true);
  datum.set_label(label);
  return datum;
}

Datum RawPicture(int rows, int cols, int seed, int label) {
  const cv::Mat image = Picture(rows, cols, seed);
  std::vector<uint8_t> planes;
  for (int c = 0; c < 3; ++c) {
    for (int h = 0; h < rows; ++h) {
      for (int w = 0; w < cols; ++w) planes.push_back(image.at<cv::Vec3b>(h, w)[c]);
    }
  }
  return RawDatum(3, rows, cols, planes, label);
}

/// A raw Datum of float_data: Caffe's other pixel kind.
Datum FloatPicture(int rows, int cols, int seed, int label) {
  Datum datum = RawPicture(rows, cols, seed, label);
  for (char byte : datum.data()) datum.add_float_data(static_cast<uint8_t>(byte) + 0.25f);
  datum.clear_data();
  return datum;
}

/// The rows of stream positions [0, count) of `datums` (record p % n of
/// epoch p / n) as Transform makes them, in floats.
std::vector<float> FloatPathRows(const std::string& transform, Phase phase,
                                 const std::vector<Datum>& datums, int64_t count) {
  const Transformer transformer(ParseText<TransformationParameter>(transform), phase, "test");
  const std::vector<int64_t> shape = transformer.OutputShape(datums[0]);
  const int64_t size = shape[0] * shape[1] * shape[2];
  const auto n = static_cast<int64_t>(datums.size());
  std::vector<float> rows(count * size);
  for (int64_t p = 0; p < count; ++p) {
    RandomEngine engine = RecordEngine(kSeed, p / n, p % n);
    transformer.Transform(datums[p % n], shape, &engine, rows.data() + p * size);
  }
  return rows;
}

/// The first `count` rows a Data layer on `source` gives, and whether its
/// batches were bytes.
std::vector<float> LayerRows(const std::string& transform, Phase phase, const std::string& source,
                             int64_t count, bool* bytes, Device device = Device::kCPU,
                             int threads = 2, const std::string& data_param = "") {
  auto layer =
      MakeLayerOn(StrCat("name: 'd' type: 'Data' phase: ", phase == TRAIN ? "TRAIN" : "TEST",
                         " transform_param { ", transform, " } data_param { source: '", source,
                         "' backend: LMDB batch_size: 3 ", data_param, " }"),
                  device);
  Context context = layer->context();
  context.seed = kSeed;
  layer->set_context(context);
  auto* data_layer = static_cast<BaseDataLayer*>(layer.get());
  data_layer->set_decode_threads(threads);
  Blob data, label;
  std::vector<Blob*> top{&data, &label};
  layer->SetUp({}, top);
  *bytes = data_layer->byte_batches();
  std::vector<float> rows;
  while (static_cast<int64_t>(rows.size()) < count * data.count() / 3) {
    layer->Forward({}, top);
    rows.insert(rows.end(), data.cpu_data(), data.cpu_data() + data.count());
  }
  rows.resize(count * data.count() / 3);
  return rows;
}

/// 5 raw byte records of 3 x 10 x 12 and, where asked, a float_data one
/// (record 2), in an LMDB under `dir`; `datums` gets them.
std::string RawSource(const TempDir& dir, bool with_float_record, std::vector<Datum>* datums) {
  datums->clear();
  for (int i = 0; i < 5; ++i) datums->push_back(RawPicture(10, 12, i, i));
  if (with_float_record) datums->insert(datums->begin() + 2, FloatPicture(10, 12, 9, 9));
  const std::string source = dir / StrCat("raw", with_float_record);
  WriteDatumDB(source, *datums);
  return source;
}

class ByteBatchesTest : public ::testing::Test {
 protected:
  std::string RawSource(bool with_float_record) {
    return demi::RawSource(dir_, with_float_record, &datums_);
  }

  TempDir dir_;
  std::vector<Datum> datums_;
};

TEST_F(ByteBatchesTest, RawRecordsGiveTheFloatPathsValues) {
  const std::string source = RawSource(false);
  // 14 rows: batches of 3 across epochs 0 to 2.
  for (const char* transform :
       {"crop_size: 7 mirror: true mean_value: 10.5 mean_value: 20 mean_value: 30 scale: 0.017",
        "mirror: true scale: 0.00390625", "crop_size: 8 mean_value: 128", ""}) {
    for (Phase phase : {TRAIN, TEST}) {
      bool bytes = false;
      const std::vector<float> rows = LayerRows(transform, phase, source, 14, &bytes);
      EXPECT_TRUE(bytes) << transform;
      EXPECT_EQ(rows, FloatPathRows(transform, phase, datums_, 14)) << transform;
    }
  }
}

TEST_F(ByteBatchesTest, AFloatRecordTakesAFloatRow) {
  const std::string source = RawSource(true);
  const std::string transform = "crop_size: 9 mirror: true mean_value: 100 scale: 0.3";
  bool bytes = false;
  const std::vector<float> rows = LayerRows(transform, TRAIN, source, 13, &bytes);
  EXPECT_TRUE(bytes);
  const std::vector<float> expected = FloatPathRows(transform, TRAIN, datums_, 13);
  EXPECT_EQ(rows, expected);
  // Row 2 is the float_data record (pixels + 0.25), which no byte gives.
  const float pixel = expected[2 * 3 * 9 * 9] / 0.3f + 100;
  EXPECT_NEAR(pixel - std::floor(pixel), 0.25f, 1e-3f);
}

TEST_F(ByteBatchesTest, JitterAndMeanFileKeepFloatBatches) {
  const std::string source = RawSource(false);
  BlobProto mean;
  for (int64_t dim : {3, 10, 12}) mean.mutable_shape()->add_dim(dim);
  for (int i = 0; i < 3 * 10 * 12; ++i) mean.add_data(static_cast<float>(i % 50));
  WriteProtoToBinaryFile(mean, dir_ / "mean.binaryproto");
  const std::string mean_file =
      "crop_size: 7 mirror: true mean_file: '" + dir_ / "mean.binaryproto" + "'";
  for (const auto& [transform, phase, as_bytes] : std::vector<std::tuple<std::string, Phase, bool>>{
           {"crop_size: 7 brightness: 0.4 contrast: 0.4 saturation: 0.4", TRAIN, false},
           {"crop_size: 7 brightness: 0.4 contrast: 0.4 saturation: 0.4", TEST, true},
           {mean_file, TRAIN, false}}) {
    bool bytes = true;
    const std::vector<float> rows = LayerRows(transform, phase, source, 8, &bytes);
    EXPECT_EQ(bytes, as_bytes) << transform;
    EXPECT_EQ(rows, FloatPathRows(transform, phase, datums_, 8)) << transform;
  }
}

TEST_F(ByteBatchesTest, EncodedRecordsGiveTheFloatPathsValues) {
  std::vector<Datum> datums;
  for (int i = 0; i < 4; ++i) datums.push_back(EncodedDatum(Picture(60, 80, i), ".jpg", i));
  datums.push_back(EncodedDatum(Picture(60, 80, 7), ".png", 7));
  WriteDatumDB(dir_ / "encoded", datums);
  for (const char* transform :
       {"random_resized_crop: true crop_size: 24 mirror: true mean_value: 104 mean_value: 117 "
        "mean_value: 124 scale: 0.017",
        "resize_shorter_side: 40 crop_size: 32 mirror: true mean_value: 110 scale: 0.5",
        "random_resized_crop: true crop_size: 24 fast_jpeg_decode: false mean_value: 3",
        "crop_size: 50 force_gray: true scale: 2"}) {
    for (Phase phase : {TRAIN, TEST}) {
      bool bytes = false;
      const std::vector<float> rows = LayerRows(transform, phase, dir_ / "encoded", 12, &bytes);
      EXPECT_TRUE(bytes) << transform;
      EXPECT_EQ(rows, FloatPathRows(transform, phase, datums, 12)) << transform;
    }
  }
}

TEST_F(ByteBatchesTest, BadRecordsAreSkippedAroundByteAndFloatRows) {
  std::vector<Datum> datums;
  for (int i = 0; i < 6; ++i) datums.push_back(RawPicture(10, 12, i, i));
  datums[4] = FloatPicture(10, 12, 4, 4);
  Datum bad = RawPicture(10, 12, 1, 1);
  bad.set_data("short");
  datums[1] = bad;
  datums[3] = bad;
  WriteDatumDB(dir_ / "bad", datums);
  const std::string transform = "crop_size: 6 mirror: true mean_value: 50 scale: 0.125";
  bool bytes = false;
  const std::vector<float> rows = LayerRows(transform, TRAIN, dir_ / "bad", 12, &bytes,
                                            Device::kCPU, 2, "skip_bad_records: true");
  EXPECT_TRUE(bytes);
  // The good records (0, 2, 4, 5) in stream order, each of its own epoch.
  const int64_t size = 3 * 6 * 6;
  const Transformer transformer(ParseText<TransformationParameter>(transform), TRAIN, "test");
  const std::vector<int64_t> shape{3, 6, 6};
  std::vector<float> expected(12 * size);
  const int good[] = {0, 2, 4, 5};
  for (int row = 0; row < 12; ++row) {
    const int record = good[row % 4];
    RandomEngine engine = RecordEngine(kSeed, row / 4, record);
    transformer.Transform(datums[record], shape, &engine, expected.data() + row * size);
  }
  EXPECT_EQ(rows, expected);
}

TEST(ByteNormalisationTest, BatchEqualsOneExampleAtATimeOnAnyThreadCount) {
  PixelNormalization normalization{{104.0f, 116.5f, 123.75f}, 0.017f};
  const int64_t examples = 5, spatial = 4099;
  std::vector<uint8_t> bytes(examples * 3 * spatial);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  std::vector<float> one_at_a_time(bytes.size());
  for (int64_t e = 0; e < examples; ++e) {
    NormalizeExample(normalization, spatial, bytes.data() + e * 3 * spatial,
                     one_at_a_time.data() + e * 3 * spatial);
  }
  const int64_t i = 3 * spatial + 7;  // example 1, channel 0
  EXPECT_EQ(one_at_a_time[i], (static_cast<float>(bytes[i]) - 104.0f) * 0.017f);
  for (int threads : {1, 2, 3}) {
    SetThreads(threads);
    std::vector<float> batch(bytes.size());
    NormalizeBatch(normalization, examples, spatial, bytes.data(), batch.data());
    EXPECT_EQ(batch, one_at_a_time) << threads << " threads";
  }
  SetThreads(0);
}

TEST(ImageDataByteBatchesTest, JpegAndPngFilesGiveTheFloatPathsValues) {
  TempDir dir;
  std::string list;
  std::vector<cv::Mat> images;
  for (int i = 0; i < 4; ++i) {
    images.push_back(Picture(48, 64, i));
    const std::string name = StrCat("img", i, i == 3 ? ".png" : ".jpg");
    ASSERT_TRUE(cv::imwrite(dir / name, images.back()));
    list += StrCat(name, " ", i, "\n");
  }
  WriteFile(dir / "list.txt", list);
  const std::string transform =
      "transform_param { random_resized_crop: true crop_size: 20 mirror: true mean_value: 100 "
      "scale: 0.25 }";
  auto rows_of = [&](const std::string& transform_text, bool* bytes) {
    auto layer = MakeLayer(StrCat("name: 'i' type: 'ImageData' ", transform_text,
                                  " image_data_param { source: '", dir / "list.txt",
                                  "' root_folder: '", dir.path(), "/' batch_size: 3 }"));
    Context context;
    context.seed = kSeed;
    layer->set_context(context);
    Blob data, label;
    std::vector<Blob*> top{&data, &label};
    layer->SetUp({}, top);
    *bytes = static_cast<BaseDataLayer*>(layer.get())->byte_batches();
    std::vector<float> rows;
    for (int b = 0; b < 3; ++b) {
      layer->Forward({}, top);
      rows.insert(rows.end(), data.cpu_data(), data.cpu_data() + data.count());
    }
    return rows;
  };
  bool bytes = false, jitter_bytes = true;
  const std::vector<float> rows = rows_of(transform, &bytes);
  EXPECT_TRUE(bytes);
  // What the float path gives each row (record row % 4 of epoch row / 4).
  const Transformer transformer(
      ParseText<TransformationParameter>(
          "random_resized_crop: true crop_size: 20 mirror: true mean_value: 100 scale: 0.25"),
      TRAIN, "test");
  const int64_t size = 3 * 20 * 20;
  for (int row = 0; row < 9; ++row) {
    std::vector<float> expected(size);
    RandomEngine engine = RecordEngine(kSeed, row / 4, row % 4);
    const std::string path = dir / StrCat("img", row % 4, row % 4 == 3 ? ".png" : ".jpg");
    const std::string encoded = ReadFileToString(path);
    if (!transformer.TransformJpeg(encoded, 3, {3, 20, 20}, &engine, expected.data())) {
      transformer.Transform(cv::imread(path, cv::IMREAD_COLOR), {3, 20, 20}, &engine,
                            expected.data());
    }
    EXPECT_EQ(std::vector<float>(rows.begin() + row * size, rows.begin() + (row + 1) * size),
              expected)
        << "row " << row;
  }
  rows_of("transform_param { crop_size: 20 brightness: 0.5 }", &jitter_bytes);
  EXPECT_FALSE(jitter_bytes);
}

// ---- on a GPU ----

TEST(GpuByteBatchesTest, DeviceNormalisationEqualsTheHosts) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  TempDir dir;
  std::vector<Datum> datums;
  const std::string source = RawSource(dir, true, &datums);
  for (const char* transform :
       {"crop_size: 9 mirror: true mean_value: 10 mean_value: 20 mean_value: 30 scale: 0.25",
        "crop_size: 9 brightness: 0.4"}) {
    bool cpu_bytes = false, gpu_bytes = false;
    const std::vector<float> cpu = LayerRows(transform, TRAIN, source, 13, &cpu_bytes);
    const std::vector<float> gpu =
        LayerRows(transform, TRAIN, source, 13, &gpu_bytes, Device::kGPU);
    EXPECT_EQ(cpu_bytes, gpu_bytes);
    EXPECT_EQ(gpu, cpu) << transform;
  }
}

// The bytes through each batch's own device buffer, uploaded by the
// prefetch thread, in a net: the same tops as the host's, step after step,
// each buffer reused several times (11 steps, 2 prefetched batches).
TEST(GpuByteBatchesTest, APlannedNetOnTheDeviceGetsTheHostsBatches) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
  TempDir dir;
  std::vector<Datum> datums;
  const std::string source = RawSource(dir, true, &datums);
  NetParameter param = ParseText<NetParameter>(
      StrCat("name: 'n' layer { name: 'd' type: 'Data' top: 'data' top: 'label' transform_param { "
             "crop_size: 8 mirror: true mean_value: 3 scale: 0.1 } data_param { source: '",
             source,
             "' backend: LMDB batch_size: 4 prefetch: 2 } } "
             "layer { name: 'r' type: 'ReLU' bottom: 'data' top: 'r' }"));
  param.mutable_state()->set_phase(TRAIN);
  Net cpu(param, Context());
  Context gpu_context;
  gpu_context.device = Device::kGPU;
  Net gpu(param, gpu_context);
  for (int step = 0; step < 11; ++step) {
    cpu.Forward();
    gpu.Forward();
    EXPECT_EQ(DataOf(*gpu.blob_by_name("r")), DataOf(*cpu.blob_by_name("r"))) << "step " << step;
    EXPECT_EQ(DataOf(*gpu.blob_by_name("label")), DataOf(*cpu.blob_by_name("label")));
  }
}

}  // namespace
}  // namespace demi
