#ifndef DEMI_DATA_IMAGE_FILE_HPP_
#define DEMI_DATA_IMAGE_FILE_HPP_

#include <cstdint>
#include <opencv2/core.hpp>
#include <string>
#include <string_view>

namespace demi {

/// Why an encoded image is cut short, or "" when it looks whole. libjpeg
/// decodes a truncated JPEG anyway (grey below the cut; "Premature end of
/// JPEG file" goes to stderr only), so its end is checked: after trailing
/// zero and whitespace bytes, a JPEG must end with the end-of-image marker
/// FF D9 and a PNG with its IEND chunk. Other formats are not checked.
/// `head` is the data's first bytes (8 suffice), `tail` its last (64 suffice).
std::string ImageTruncation(std::string_view head, std::string_view tail);

/// The most pixels an image may have: OpenCV's imdecode refuses more
/// (OPENCV_IO_MAX_IMAGE_PIXELS, default 2^30).
constexpr int64_t kMaxImagePixels = int64_t{1} << 30;

/// Why a JPEG's data is damaged ("is a corrupt JPEG: " and libjpeg's warning;
/// "does not decode as an image: " and its error where it cannot decode at
/// all), or "" when it decodes cleanly or is not a JPEG. libjpeg decodes a JPEG
/// whose middle is corrupt anyway, with a warning OpenCV does not pass on;
/// this decodes the entropy-coded data (not the pixels) to see the warning.
/// A header that declares more than kMaxImagePixels is refused from the
/// header alone (its coefficients would take 2 bytes a pixel).
std::string JpegCorruption(std::string_view data);

/// Reads and decodes an image file, as cv::imread does (color or gray).
/// Throws BadRecordError (data/transformer.hpp) when the path is missing or
/// a directory, the image is truncated (see ImageTruncation) or corrupt (see
/// JpegCorruption), or it does not decode; the caller names the file.
/// `check_damage` false skips the JpegCorruption pass (a file known clean).
cv::Mat ReadImageFile(const std::string& path, bool is_color, bool check_damage = true);

/// ReadImageFile in two steps: the file's bytes, checked as it checks them,
/// and their decoding (for a caller that may decode them another way).
std::string ReadImageBytes(const std::string& path, bool check_damage = true);
cv::Mat DecodeImageBytes(const std::string& data, bool is_color);

}  // namespace demi

#endif  // DEMI_DATA_IMAGE_FILE_HPP_
