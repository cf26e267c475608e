// util/lazy_library: a library loaded on first use; one that cannot be loaded,
// or lacks a function, is an Error naming it, what needs it and the fix.
// OpenCV's image codecs are loaded so (util/lazy_imgcodecs).
#include <gtest/gtest.h>

#include <fstream>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "demi/common.hpp"
#include "demi/util/lazy_library.hpp"

namespace demi {
namespace {

TEST(LazyLibraryTest, AMissingLibraryIsNamedWithItsFix) {
  const LazyLibrary missing = {"cuNothing", "libdemi_no_such_library.so.7", "doing nothing",
                               "NVIDIA's package libnothing7"};
  try {
    LazySymbol(missing, "nothingCreate");
    FAIL() << "a missing library loaded";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot load cuNothing (libdemi_no_such_library.so.7), which doing "
                        "nothing needs"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("libnothing7"), std::string::npos) << what;
    EXPECT_NE(what.find("LD_LIBRARY_PATH"), std::string::npos) << what;
  }
}

TEST(LazyLibraryTest, ResolvesAFunctionAndNamesAMissingOne) {
  // libm stands in for a vendor library: this test must not load one.
  const LazyLibrary libm = {"libm", "libm.so.6", "this test", "libc6"};
  auto cosine = LazyFunction<double (*)(double)>(libm, "cos");
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
  try {
    LazySymbol(libm, "demiNoSuchFunction");
    FAIL() << "a missing function resolved";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("libm (libm.so.6) has no function demiNoSuchFunction"),
              std::string::npos)
        << e.what();
  }
}

/// Whether this process has mapped a file whose name contains `name`.
bool Mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

TEST(LazyImgcodecsTest, EncodesAndDecodesThroughTheLoadedLibrary) {
  // Odd sizes and distinct values: a swapped axis or channel shows.
  cv::Mat image(3, 5, CV_8UC3);
  for (int y = 0; y < image.rows; ++y) {
    for (int x = 0; x < image.cols; ++x) {
      image.at<cv::Vec3b>(y, x) = cv::Vec3b(static_cast<uchar>(10 * y + x),
                                            static_cast<uchar>(100 + x), static_cast<uchar>(y));
    }
  }
  std::vector<uchar> png;
  ASSERT_TRUE(cv::imencode(".png", image, png));
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(std::string(png.begin() + 1, png.begin() + 4), "PNG");
  const cv::Mat decoded = cv::imdecode(png, cv::IMREAD_COLOR);
  ASSERT_EQ(decoded.rows, 3);
  ASSERT_EQ(decoded.cols, 5);
  ASSERT_EQ(decoded.type(), CV_8UC3);
  EXPECT_EQ(cv::norm(decoded, image, cv::NORM_INF), 0.0);
  // Not linked (the bundle leaves it out), so the calls above loaded it.
  EXPECT_TRUE(Mapped("libopencv_imgcodecs.so"));
}

}  // namespace
}  // namespace demi
