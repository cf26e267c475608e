// Reading image files: truncated JPEGs and PNGs are caught, not decoded grey.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "demi/data/image_file.hpp"
#include "demi/data/transformer.hpp"  // BadRecordError
#include "test_util.hpp"

namespace demi {
namespace {

/// A 48 x 64 textured color image, encoded as `extension` (".jpg", ".png"):
/// its entropy-coded data outweighs the headers, so a cut lands in it.
std::string Encoded(const std::string& extension) {
  cv::Mat image(48, 64, CV_8UC3);
  for (int h = 0; h < image.rows; ++h) {
    for (int w = 0; w < image.cols; ++w) {
      image.at<cv::Vec3b>(h, w) = cv::Vec3b(5 * h, (w * w) % 256, (7 * h * w) % 256);
    }
  }
  std::vector<uchar> bytes;
  EXPECT_TRUE(cv::imencode(extension, image, bytes));
  return std::string(bytes.begin(), bytes.end());
}

std::string Truncation(const std::string& bytes) { return ImageTruncation(bytes, bytes); }

TEST(ImageTruncationTest, WholeImagesPassAndCutOnesAreNamed) {
  for (const std::string extension : {".jpg", ".png"}) {
    const std::string whole = Encoded(extension);
    EXPECT_EQ(Truncation(whole), "") << extension;
    // Zero and newline padding after the end is harmless.
    EXPECT_EQ(Truncation(whole + std::string(5, '\0') + "\n"), "") << extension;
    for (size_t cut : {whole.size() / 2, whole.size() - 1, size_t{20}}) {
      EXPECT_NE(Truncation(whole.substr(0, cut)), "") << extension << " cut at " << cut;
    }
  }
  EXPECT_NE(Truncation(Encoded(".jpg").substr(0, 300)).find("truncated JPEG"), std::string::npos);
  EXPECT_NE(Truncation(Encoded(".png").substr(0, 100)).find("truncated PNG"), std::string::npos);
  EXPECT_EQ(Truncation("BM not checked"), "");  // other formats: OpenCV's decoder decides
}

TEST(ReadImageFileTest, ATruncatedJpegIsABadRecordThatSaysSo) {
  TempDir dir;
  const std::string whole = Encoded(".jpg");
  WriteFile(dir / "whole.jpg", whole);
  WriteFile(dir / "cut.jpg", whole.substr(0, whole.size() * 2 / 3));
  const cv::Mat image = ReadImageFile(dir / "whole.jpg", true);
  EXPECT_EQ(image.rows, 48);
  EXPECT_EQ(image.cols, 64);
  // OpenCV alone decodes the cut file (grey below the cut).
  EXPECT_FALSE(cv::imread(dir / "cut.jpg").empty());
  try {
    ReadImageFile(dir / "cut.jpg", true);
    ADD_FAILURE() << "a truncated JPEG was read";
  } catch (const BadRecordError& error) {
    EXPECT_NE(std::string(error.what()).find("is a truncated JPEG"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(ReadImageFile(dir / "missing.jpg", true), BadRecordError);
}

TEST(ReadImageFileTest, RealJpegsOfOpenCvDocReadWholeAndCut) {
  const std::vector<std::string> jpegs = OpenCvDocJpegs();
  if (jpegs.empty()) GTEST_SKIP() << "opencv-doc's example JPEGs are not installed";
  TempDir dir;
  for (const std::string& path : jpegs) {
    EXPECT_FALSE(ReadImageFile(path, true).empty()) << path;
    const std::string bytes = ReadFileToString(path);
    WriteFile(dir / "cut.jpg", bytes.substr(0, bytes.size() - bytes.size() / 4));
    EXPECT_THROW(ReadImageFile(dir / "cut.jpg", true), BadRecordError) << path;
  }
}

// A JPEG whose entropy-coded middle is damaged, markers intact: OpenCV
// decodes it without a word; libjpeg's warning names it.
TEST(JpegCorruptionTest, ADamagedMiddleIsNamedAndWholeImagesPass) {
  const std::string whole = Encoded(".jpg");
  EXPECT_EQ(JpegCorruption(whole), "");
  EXPECT_EQ(JpegCorruption(Encoded(".png")), "");  // not a JPEG: not checked
  // A little padding before the end-of-image marker (some cameras write it)
  // is no damage.
  std::string padded = whole;
  padded.insert(padded.size() - 2, "\x01\x02");
  EXPECT_EQ(JpegCorruption(padded), "");
  std::string damaged = whole;
  for (size_t i = whole.size() / 2; i < whole.size() / 2 + 64; ++i) {
    damaged[i] = static_cast<char>((i * 37 + 11) % 255);  // never FF: no new marker
  }
  ASSERT_FALSE(
      cv::imdecode(std::vector<uchar>(damaged.begin(), damaged.end()), cv::IMREAD_COLOR).empty());
  EXPECT_NE(JpegCorruption(damaged).find("is a corrupt JPEG: "), std::string::npos);
  // A header that declares 65000 x 65000 pixels (found by make fuzz: a
  // 703-byte file made the coefficient pass allocate 8.5 GB) is refused
  // from the header.
  std::string huge = whole;
  const size_t sof = huge.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  for (size_t at : {sof + 5, sof + 7}) huge.replace(at, 2, "\xFD\xE8");  // 65000
  EXPECT_NE(JpegCorruption(huge).find("declares 65000 x 65000 pixels"), std::string::npos)
      << JpegCorruption(huge);
  // A file so damaged libjpeg gives up (no image data at all) is named too.
  EXPECT_NE(JpegCorruption(whole.substr(0, 200) + "\xFF\xD9").find("does not decode as an image: "),
            std::string::npos);

  TempDir dir;
  WriteFile(dir / "damaged.jpg", damaged);
  ExpectErrorContaining([&] { ReadImageFile(dir / "damaged.jpg", true); }, {"is a corrupt JPEG: "});
  ExpectErrorContaining([&] { ReadImageFile(dir.path(), true); }, {"is a directory"});
}

}  // namespace
}  // namespace demi
