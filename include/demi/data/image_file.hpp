#ifndef DEMI_DATA_IMAGE_FILE_HPP_
#define DEMI_DATA_IMAGE_FILE_HPP_

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

/// Reads and decodes an image file, as cv::imread does (color or gray).
/// Throws BadRecordError (data/transformer.hpp) when the file is missing, truncated (see
/// ImageTruncation) or does not decode; the caller names the file.
cv::Mat ReadImageFile(const std::string& path, bool is_color);

}  // namespace demi

#endif  // DEMI_DATA_IMAGE_FILE_HPP_
