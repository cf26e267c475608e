#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <set>

#include "data_test_util.hpp"
#include "demi/data/convert.hpp"
#include "demi/layers/data_layer.hpp"
#include "demi/util/io.hpp"
#include "test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

/// Three 2 x 3 images of values 10 i + p and labels 7, 8, 9.
void WriteMnist(const TempDir& dir, bool gzip) {
  std::string pixels;
  for (int i = 0; i < 3; ++i) {
    for (int p = 0; p < 6; ++p) pixels.push_back(static_cast<char>(10 * i + p));
  }
  const std::string images = IdxBytes({3, 2, 3}, pixels);
  const std::string labels = IdxBytes({3}, std::string{7, 8, 9});
  WriteFile(dir / "images", gzip ? Gzip(images) : images);
  WriteFile(dir / "labels", gzip ? Gzip(labels) : labels);
}

std::vector<std::pair<std::string, Datum>> ReadAll(const std::string& path) {
  std::vector<std::pair<std::string, Datum>> records;
  for (auto cursor = LMDB::Open(path, DBMode::kRead)->NewCursor(); cursor->valid();
       cursor->Next()) {
    Datum datum;
    EXPECT_TRUE(
        datum.ParseFromArray(cursor->value().data(), static_cast<int>(cursor->value().size())));
    records.emplace_back(std::string(cursor->key()), datum);
  }
  return records;
}

TEST(ConvertMnistTest, PlainAndGzippedIdx) {
  for (bool gzip : {false, true}) {
    TempDir dir;
    WriteMnist(dir, gzip);
    EXPECT_EQ(ConvertMnist(dir / "images", dir / "labels", dir / "db"), 3);
    const auto records = ReadAll(dir / "db");
    ASSERT_EQ(records.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(records[i].first, StrCat("0000000", i));
      const Datum& datum = records[i].second;
      EXPECT_EQ(datum.channels(), 1);
      EXPECT_EQ(datum.height(), 2);
      EXPECT_EQ(datum.width(), 3);
      EXPECT_EQ(datum.label(), 7 + i);
      EXPECT_FALSE(datum.encoded());
      EXPECT_EQ(static_cast<uint8_t>(datum.data()[4]), 10 * i + 4);
    }
  }
}

TEST(ConvertMnistTest, BadIdxFilesNameTheFile) {
  TempDir dir;
  WriteMnist(dir, false);
  WriteFile(dir / "notidx", "\x1a\x2b\x08\x01\x00\x00\x00\x01x");
  ExpectErrorContaining([&] { ReadIdxFile(dir / "notidx"); },
                        {dir / "notidx", "is not an IDX file"});
  WriteFile(dir / "short", IdxBytes({4, 2, 3}, std::string(20, 'x')));
  ExpectErrorContaining([&] { ReadIdxFile(dir / "short"); },
                        {dir / "short", "need 24 bytes of values, but it holds 20 (truncated?)"});
  WriteFile(dir / "shortgz", Gzip(IdxBytes({4, 2, 3}, std::string(20, 'x'))).substr(0, 20));
  ExpectErrorContaining([&] { ReadIdxFile(dir / "shortgz"); }, {dir / "shortgz"});
  WriteFile(dir / "badgz", std::string("\x1f\x8b", 2) + "definitely not deflate data");
  ExpectErrorContaining([&] { ReadIdxFile(dir / "badgz"); },
                        {dir / "badgz", "is not valid gzip data"});
  ExpectErrorContaining([&] { ReadIdxFile(dir / "missing"); },
                        {"cannot open file", dir / "missing"});
  WriteFile(dir / "two_labels", IdxBytes({2}, std::string{1, 2}));
  ExpectErrorContaining([&] { ConvertMnist(dir / "images", dir / "two_labels", dir / "db"); },
                        {"holds 3 images", dir / "two_labels", "holds 2 labels"});
  ExpectErrorContaining([&] { ConvertMnist(dir / "labels", dir / "labels", dir / "db2"); },
                        {dir / "labels", "1-D data; MNIST images are 3-D"});
  ConvertMnist(dir / "images", dir / "labels", dir / "db");
  ExpectErrorContaining([&] { ConvertMnist(dir / "images", dir / "labels", dir / "db"); },
                        {dir / "db", "already exists"});
  WriteFile(dir / "no_images", IdxBytes({0, 2, 3}, ""));
  WriteFile(dir / "no_labels", IdxBytes({0}, ""));
  ExpectErrorContaining([&] { ConvertMnist(dir / "no_images", dir / "no_labels", dir / "db3"); },
                        {dir / "no_images", "holds no images"});
  EXPECT_FALSE(std::filesystem::exists(dir / "db3"));
}

TEST(ReadImageListTest, LabelFollowsTheLastSpace) {
  TempDir dir;
  WriteFile(dir / "list.txt", "a dir/x.png 3\r\n\ny.jpg\t-1  \n");
  const std::vector<ImageListEntry> entries = ReadImageList(dir / "list.txt");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].path, "a dir/x.png");
  EXPECT_EQ(entries[0].label, 3);
  EXPECT_EQ(entries[0].line, 1);
  EXPECT_EQ(entries[1].path, "y.jpg");
  EXPECT_EQ(entries[1].label, -1);
  EXPECT_EQ(entries[1].line, 3);
}

/// A list of the opencv-doc JPEGs with labels 0, 1, ... (root: their folder).
std::vector<std::string> WriteJpegList(const TempDir& dir) {
  std::vector<std::string> names;
  std::string list;
  for (const std::string& path : OpenCvDocJpegs()) {
    names.push_back(std::filesystem::path(path).filename().string());
    list += StrCat(names.back(), " ", names.size() - 1, "\n");
  }
  WriteFile(dir / "list.txt", list);
  return names;
}

const char kJpegRoot[] = "/usr/share/doc/opencv-doc/examples/data/";

TEST(ConvertImageSetTest, EncodedRealJpegsKeepTheirBytesAndFeedTheDataLayer) {
  if (OpenCvDocJpegs().size() < 4) GTEST_SKIP() << "opencv-doc's example JPEGs are not installed";
  TempDir dir;
  const std::vector<std::string> names = WriteJpegList(dir);
  ImageSetOptions options;
  options.encoded = true;
  const ConvertStats stats = ConvertImageSet(kJpegRoot, dir / "list.txt", dir / "db", options);
  EXPECT_EQ(stats.written, static_cast<int64_t>(names.size()));
  EXPECT_EQ(stats.skipped, 0);
  const auto records = ReadAll(dir / "db");
  ASSERT_EQ(records.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(records[i].first, StrCat("0000000", i, "_", names[i]));
    EXPECT_TRUE(records[i].second.encoded());
    EXPECT_EQ(records[i].second.label(), static_cast<int>(i));
    EXPECT_EQ(records[i].second.data(), ReadFileToString(kJpegRoot + names[i]));
  }
  // The Data layer decodes them: the usual resize-and-crop and a random-resized
  // crop. left01.jpg and right01.jpg are grayscale JPEGs: force_color.
  Blob data, label;
  std::vector<Blob*> top{&data, &label};
  auto make = [&](const std::string& transform, size_t batch_size = 0, int threads = 1) {
    auto layer = MakeLayer(
        StrCat("name: 'd' type: 'Data' ", transform, " data_param { source: '", dir / "db",
               "' backend: LMDB batch_size: ", batch_size > 0 ? batch_size : names.size(), " }"));
    static_cast<DataLayer*>(layer.get())->set_decode_threads(threads);
    layer->SetUp({}, top);
    return layer;
  };
  for (const char* transform :
       {"phase: TEST transform_param { resize_shorter_side: 40 crop_size: 32 force_color: true }",
        "transform_param { random_resized_crop: true crop_size: 32 mirror: true force_color: true "
        "brightness: 0.2 contrast: 0.2 saturation: 0.2 }"}) {
    auto layer = make(transform);
    layer->Forward({}, top);
    EXPECT_EQ(data.shape(), (std::vector<int64_t>{static_cast<int64_t>(names.size()), 3, 32, 32}));
    for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(label.cpu_data()[i], i);
    EXPECT_GT(data.asum_data(), 0);
  }
  // The random-resized crop and jitter of each JPEG depend on its record
  // only: two batches of half the size on 3 decode threads give the same rows.
  const std::string modern =
      "transform_param { random_resized_crop: true crop_size: 32 mirror: true force_color: true "
      "brightness: 0.2 contrast: 0.2 saturation: 0.2 }";
  auto whole = make(modern);
  whole->Forward({}, top);
  const std::vector<float> reference = DataOf(data);
  const size_t half = names.size() / 2;
  auto halves = make(modern, half, 3);
  std::vector<float> rows;
  for (int i = 0; i < 2; ++i) {
    halves->Forward({}, top);
    rows.insert(rows.end(), data.cpu_data(), data.cpu_data() + data.count());
  }
  EXPECT_EQ(rows, std::vector<float>(reference.begin(), reference.begin() + rows.size()));
  const auto gray = std::find(names.begin(), names.end(), "left01.jpg");
  if (gray != names.end()) {
    auto layer = make("transform_param { resize_shorter_side: 40 crop_size: 32 }");
    ExpectErrorContaining(
        [&] { layer->Forward({}, top); },
        {"record '0000000" + std::to_string(gray - names.begin()) + "_left01.jpg'",
         "gives a 1x32x32 image, but the batch holds 3x32x32 images"});
  }
}

TEST(ConvertImageSetTest, RawResizedGrayAndShuffled) {
  if (OpenCvDocJpegs().size() < 4) GTEST_SKIP() << "opencv-doc's example JPEGs are not installed";
  TempDir dir;
  const std::vector<std::string> names = WriteJpegList(dir);
  ImageSetOptions options;
  options.gray = true;
  options.resize_height = 16;
  options.resize_width = 20;
  options.check_size = true;
  options.shuffle = true;
  ConvertImageSet(kJpegRoot, dir / "list.txt", dir / "db", options);
  const auto records = ReadAll(dir / "db");
  ASSERT_EQ(records.size(), names.size());
  std::set<int> labels;
  bool moved = false;
  for (size_t i = 0; i < records.size(); ++i) {
    const Datum& datum = records[i].second;
    EXPECT_FALSE(datum.encoded());
    EXPECT_EQ(datum.channels(), 1);
    EXPECT_EQ(datum.height(), 16);
    EXPECT_EQ(datum.width(), 20);
    EXPECT_EQ(datum.data().size(), 320u);
    EXPECT_EQ(records[i].first, StrCat("0000000", i, "_", names[datum.label()]));
    labels.insert(datum.label());
    moved |= datum.label() != static_cast<int>(i);
  }
  EXPECT_EQ(labels.size(), names.size());
  EXPECT_TRUE(moved) << "--shuffle changed the order";
  // Re-encoded as PNG after the resize.
  options.encoded = true;
  options.encode_type = "png";
  ConvertImageSet(kJpegRoot, dir / "list.txt", dir / "png", options);
  const auto png = ReadAll(dir / "png");
  cv::Mat decoded = cv::imdecode(cv::Mat(1, static_cast<int>(png[0].second.data().size()), CV_8UC1,
                                         const_cast<char*>(png[0].second.data().data())),
                                 cv::IMREAD_UNCHANGED);
  EXPECT_EQ(decoded.rows, 16);
  EXPECT_EQ(decoded.cols, 20);
  EXPECT_EQ(decoded.channels(), 1);
}

TEST(ConvertImageSetTest, ErrorsNameListLineAndImage) {
  TempDir dir;
  ASSERT_TRUE(cv::imwrite(dir / "a.png", cv::Mat(2, 2, CV_8UC3, cv::Scalar(1, 2, 3))));
  ASSERT_TRUE(cv::imwrite(dir / "b.png", cv::Mat(3, 2, CV_8UC3, cv::Scalar(1, 2, 3))));
  WriteFile(dir / "bad.png", "not a png");
  const std::string root = dir.path() + "/";
  WriteFile(dir / "list.txt", "a.png 0\nbad.png 1\nmissing.png 2\nb.png 3\n");
  ImageSetOptions options;
  ExpectErrorContaining([&] { ConvertImageSet(root, dir / "list.txt", dir / "db1", options); },
                        {dir / "list.txt" + ":2", "image '" + root + "bad.png'",
                         "does not decode as an image", "--skip_bad_records"});
  // The failed conversion left nothing: the suggested rerun writes db1.
  EXPECT_FALSE(std::filesystem::exists(dir / "db1"));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
  options.skip_bad = true;
  EXPECT_EQ(ConvertImageSet(root, dir / "list.txt", dir / "db1", options).written, 2);
  const ConvertStats stats = ConvertImageSet(root, dir / "list.txt", dir / "db2", options);
  EXPECT_EQ(stats.written, 2);
  EXPECT_EQ(stats.skipped, 2);
  options.check_size = true;
  ExpectErrorContaining([&] { ConvertImageSet(root, dir / "list.txt", dir / "db3", options); },
                        {dir / "list.txt" + ":4", "is 3x3x2 but the first image is 3x2x2"});
  WriteFile(dir / "nolabel.txt", "a.png\n");
  ExpectErrorContaining([&] { ConvertImageSet(root, dir / "nolabel.txt", dir / "db4", options); },
                        {dir / "nolabel.txt" + ":1", "has no label"});
  options.resize_height = 4;
  ExpectErrorContaining([&] { ConvertImageSet(root, dir / "list.txt", dir / "db5", options); },
                        {"resize_height and resize_width must be given together"});
  options.resize_height = -5;
  options.resize_width = 28;
  ExpectErrorContaining([&] { ConvertImageSet(root, dir / "list.txt", dir / "db6", options); },
                        {"must not be negative", "-5 and 28"});
}

// Found by the image_decode fuzz target: a JPEG whose header claims more
// pixels than OpenCV allows made imread throw a cv::Exception, which escaped
// convert_imageset and the ImageData layer unnamed.
TEST(ConvertImageSetTest, AHeaderClaimingAHugeImageIsABadRecord) {
  TempDir dir;
  std::vector<uchar> jpeg;
  ASSERT_TRUE(cv::imencode(".jpg", cv::Mat(8, 8, CV_8UC3, cv::Scalar(1, 2, 3)), jpeg));
  // Baseline frame header: FF C0, length (2), precision (1), height (2), width (2).
  const uchar sof0[] = {0xFF, 0xC0};
  auto sof = std::search(jpeg.begin(), jpeg.end(), std::begin(sof0), std::end(sof0));
  ASSERT_TRUE(jpeg.end() - sof > 9) << "no frame header in OpenCV's JPEG";
  std::fill(sof + 5, sof + 9, uchar{0xFF});  // 65535 x 65535 pixels
  WriteFile(dir / "huge.jpg", std::string(jpeg.begin(), jpeg.end()));
  Datum datum;
  ExpectErrorContaining([&] { ReadImageToDatum(dir / "huge.jpg", 0, 0, 0, true, "", &datum); },
                        {"does not decode as an image"});
  WriteFile(dir / "list.txt", "huge.jpg 0\n");
  const std::string root = dir.path() + "/";
  ExpectErrorContaining(
      [&] { ConvertImageSet(root, dir / "list.txt", dir / "db", ImageSetOptions()); },
      {dir / "list.txt" + ":1", "image '" + root + "huge.jpg'", "does not decode as an image"});
}

TEST(ComputeImageMeanTest, MeanOfRawAndEncodedRecords) {
  TempDir dir;
  WriteDatumDB(dir / "raw",
               {RawDatum(2, 1, 2, {0, 2, 4, 6}, 0), RawDatum(2, 1, 2, {2, 4, 6, 9}, 1)});
  std::vector<double> channel_means;
  const BlobProto mean = ComputeImageMean(dir / "raw", &channel_means);
  EXPECT_EQ(mean.num(), 1);
  EXPECT_EQ(mean.channels(), 2);
  EXPECT_EQ(mean.height(), 1);
  EXPECT_EQ(mean.width(), 2);
  EXPECT_EQ(std::vector<float>(mean.data().begin(), mean.data().end()),
            (std::vector<float>{1, 3, 5, 7.5}));
  EXPECT_EQ(channel_means, (std::vector<double>{2, 6.25}));

  // A mean file is what transform_param mean_file reads.
  WriteProtoToBinaryFile(mean, dir / "mean.binaryproto");
  const Transformer transformer(
      ParseText<TransformationParameter>("mean_file: '" + (dir / "mean.binaryproto") + "'"), TEST,
      "t");
  std::vector<float> out(4);
  RandomEngine engine(1);
  transformer.Transform(RawDatum(2, 1, 2, {1, 3, 5, 7}, 0), {2, 1, 2}, &engine, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, -0.5}));

  std::vector<uchar> png;
  ASSERT_TRUE(cv::imencode(".png", cv::Mat(1, 1, CV_8UC1, cv::Scalar(10)), png));
  Datum encoded;
  encoded.set_data(png.data(), png.size());
  encoded.set_encoded(true);
  WriteDatumDB(dir / "mixed", {RawDatum(1, 1, 1, {20}, 0), encoded, RawDatum(1, 1, 2, {1, 1}, 0)});
  ExpectErrorContaining(
      [&] { ComputeImageMean(dir / "mixed", &channel_means); },
      {"record '00000002' of '" + (dir / "mixed") + "'", "is 1x1x2 but the first record is 1x1x1"});
  WriteDatumDB(dir / "two", {RawDatum(1, 1, 1, {20}, 0), encoded});
  EXPECT_EQ(ComputeImageMean(dir / "two", &channel_means).data(0), 15.0f);
  LMDB::Open(dir / "empty", DBMode::kNew)->NewTransaction()->Commit();
  ExpectErrorContaining([&] { ComputeImageMean(dir / "empty", &channel_means); },
                        {dir / "empty", "is empty"});
}

// ---- the tools themselves (built by `make tools`, which runtest depends on) ----

int RunCommand(const std::string& command) {
  const int status = std::system((command + " > /dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool ToolsBuilt() {
  return std::filesystem::exists(ToolPath("convert_mnist")) &&
         std::filesystem::exists(ToolPath("convert_imageset")) &&
         std::filesystem::exists(ToolPath("compute_image_mean"));
}

TEST(DataToolsTest, ConvertMnistAndComputeImageMean) {
  if (!ToolsBuilt()) GTEST_SKIP() << "the convert tools are not built (make tools)";
  TempDir dir;
  WriteMnist(dir, true);
  EXPECT_EQ(RunCommand(StrCat(ToolPath("convert_mnist"), " ", dir / "images", " ", dir / "labels",
                              " ", dir / "db")),
            0);
  EXPECT_EQ(ReadAll(dir / "db").size(), 3u);
  EXPECT_NE(RunCommand(StrCat(ToolPath("convert_mnist"), " ", dir / "images", " ", dir / "db")), 0);
  EXPECT_NE(RunCommand(StrCat(ToolPath("convert_mnist"), " --backend=leveldb ", dir / "images", " ",
                              dir / "labels", " ", dir / "db2")),
            0);
  EXPECT_EQ(RunCommand(StrCat(ToolPath("compute_image_mean"), " ", dir / "db", " ",
                              dir / "mean.binaryproto")),
            0);
  BlobProto mean;
  ReadProtoFromBinaryFile(dir / "mean.binaryproto", &mean);
  ASSERT_EQ(mean.data_size(), 6);
  EXPECT_EQ(mean.data(5), 15.0f);  // (5 + 15 + 25) / 3
}

TEST(DataToolsTest, ConvertImagesetWithCaffesFlags) {
  if (!ToolsBuilt()) GTEST_SKIP() << "the convert tools are not built (make tools)";
  if (OpenCvDocJpegs().size() < 4) GTEST_SKIP() << "opencv-doc's example JPEGs are not installed";
  TempDir dir;
  const std::vector<std::string> names = WriteJpegList(dir);
  EXPECT_EQ(RunCommand(StrCat(ToolPath("convert_imageset"),
                              " --resize_height=8 --resize_width=8 "
                              "--shuffle --check_size --backend=lmdb ",
                              kJpegRoot, " ", dir / "list.txt", " ", dir / "db")),
            0);
  const auto records = ReadAll(dir / "db");
  ASSERT_EQ(records.size(), names.size());
  EXPECT_EQ(records[0].second.channels(), 3);
  EXPECT_EQ(records[0].second.height(), 8);
  EXPECT_EQ(RunCommand(StrCat(ToolPath("convert_imageset"), " --encoded --encode_type=png ",
                              kJpegRoot, " ", dir / "list.txt", " ", dir / "png")),
            0);
  EXPECT_TRUE(ReadAll(dir / "png")[0].second.encoded());
  EXPECT_NE(RunCommand(StrCat(ToolPath("convert_imageset"), " ", kJpegRoot, " ", dir / "list.txt")),
            0);
}

}  // namespace
}  // namespace demi
