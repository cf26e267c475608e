#include "demi/data/image_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>

#include "demi/data/transformer.hpp"  // BadRecordError

namespace demi {

namespace {

constexpr size_t kTailBytes = 64;

bool StartsWith(std::string_view data, std::string_view prefix) {
  return data.size() >= prefix.size() && data.compare(0, prefix.size(), prefix) == 0;
}

bool EndsWith(std::string_view data, std::string_view suffix) {
  return data.size() >= suffix.size() &&
         data.compare(data.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// `data` without trailing zero and whitespace bytes (padding some writers add).
std::string_view TrimPadding(std::string_view data) {
  while (!data.empty() && (data.back() == '\0' || data.back() == ' ' || data.back() == '\n' ||
                           data.back() == '\r' || data.back() == '\t')) {
    data.remove_suffix(1);
  }
  return data;
}

}  // namespace

std::string ImageTruncation(std::string_view head, std::string_view tail) {
  const std::string_view end = TrimPadding(tail);
  if (StartsWith(head, "\xFF\xD8\xFF")) {
    if (!EndsWith(end, "\xFF\xD9")) {
      return "is a truncated JPEG: it does not end with the end-of-image marker FF D9";
    }
  } else if (StartsWith(head, "\x89PNG\r\n\x1A\n")) {
    // The IEND chunk: length 0, type "IEND", then its 4-byte CRC.
    const std::string_view iend("\0\0\0\0IEND", 8);
    if (end.size() < iend.size() + 4 ||
        end.compare(end.size() - 4 - iend.size(), iend.size(), iend) != 0) {
      return "is a truncated PNG: it does not end with an IEND chunk";
    }
  }
  return "";
}

cv::Mat ReadImageFile(const std::string& path, bool is_color) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) throw BadRecordError("does not exist");
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) throw BadRecordError("cannot be opened");
  char head[8] = {};
  in.read(head, sizeof(head));
  const std::string_view head_view(head, static_cast<size_t>(in.gcount()));
  in.clear();
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff tail_size = std::min<std::streamoff>(size, kTailBytes);
  char tail[kTailBytes] = {};
  in.seekg(size - tail_size);
  in.read(tail, tail_size);
  if (in.gcount() != tail_size) throw BadRecordError("cannot be read");
  const std::string truncation =
      ImageTruncation(head_view, std::string_view(tail, static_cast<size_t>(tail_size)));
  if (!truncation.empty()) throw BadRecordError(StrCat(truncation, " (", size, " bytes)"));
  cv::Mat image;
  try {  // OpenCV throws where a header claims more than OPENCV_IO_MAX_IMAGE_PIXELS pixels
    image = cv::imread(path, is_color ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE);
  } catch (const cv::Exception& e) {
    throw BadRecordError(StrCat("does not decode as an image: ", e.err));
  }
  if (image.empty()) throw BadRecordError("cannot be read or does not decode as an image");
  return image;
}

}  // namespace demi
