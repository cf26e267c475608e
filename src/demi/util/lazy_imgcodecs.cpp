// OpenCV's image codecs (cv::imread, imwrite, imdecode, imencode), loaded from
// libopencv_imgcodecs on first use (see util/lazy_library.hpp). Linking it
// would make every process load GDAL, GDCM, OpenEXR and their ~100 libraries
// (ICU's data, PROJ, Poppler, x265...): most of `make bundle`'s bytes, for
// formats no training run reads. Call sites include opencv2/imgcodecs.hpp and
// stay unchanged: the functions are defined here, hidden, as calls through a
// pointer resolved by their C++ (Itanium ABI) symbol names. A function not
// defined here fails to link: add it, with its name from
// `nm -D libopencv_imgcodecs.so.<version>`.
#include <opencv2/core/version.hpp>
#include <opencv2/imgcodecs.hpp>
#include <string>
#include <vector>

#include "demi/util/lazy_library.hpp"

namespace {

/// OpenCV's sonames carry major * 100 + minor: libopencv_imgcodecs.so.406 for 4.6.
const demi::LazyLibrary& Imgcodecs() {
  static const std::string soname =
      "libopencv_imgcodecs.so." + std::to_string(CV_VERSION_MAJOR * 100 + CV_VERSION_MINOR);
  static const std::string install =
      "Debian's package libopencv-imgcodecs" + soname.substr(soname.rfind('.') + 1);
  static const demi::LazyLibrary library = {"OpenCV's image codecs", soname.c_str(),
                                            "reading or writing an image (JPEG, PNG...)",
                                            install.c_str()};
  return library;
}

}  // namespace

namespace cv {

#define DEMI_HIDDEN __attribute__((visibility("hidden")))

DEMI_HIDDEN Mat imread(const String& filename, int flags) {
  static const auto function = demi::LazyFunction<Mat (*)(const String&, int)>(
      Imgcodecs(), "_ZN2cv6imreadERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEi");
  return function(filename, flags);
}

DEMI_HIDDEN bool imwrite(const String& filename, InputArray img, const std::vector<int>& params) {
  static const auto function =
      demi::LazyFunction<bool (*)(const String&, InputArray, const std::vector<int>&)>(
          Imgcodecs(),
          "_ZN2cv7imwriteERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_"
          "11_InputArrayERKSt6vectorIiSaIiEE");
  return function(filename, img, params);
}

DEMI_HIDDEN Mat imdecode(InputArray buf, int flags) {
  static const auto function = demi::LazyFunction<Mat (*)(InputArray, int)>(
      Imgcodecs(), "_ZN2cv8imdecodeERKNS_11_InputArrayEi");
  return function(buf, flags);
}

DEMI_HIDDEN bool imencode(const String& ext, InputArray img, std::vector<uchar>& buf,
                          const std::vector<int>& params) {
  static const auto function = demi::LazyFunction<bool (*)(
      const String&, InputArray, std::vector<uchar>&, const std::vector<int>&)>(
      Imgcodecs(),
      "_ZN2cv8imencodeERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_11_"
      "InputArrayERSt6vectorIhSaIhEERKSB_IiSaIiEE");
  return function(ext, img, buf, params);
}

#undef DEMI_HIDDEN

}  // namespace cv
