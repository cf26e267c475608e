#include "demi/data/image_file.hpp"

// jpeglib.h needs FILE and size_t declared before it.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <csetjmp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <opencv2/imgcodecs.hpp>

#include "demi/data/transformer.hpp"  // BadRecordError
#include "demi/util/strings.hpp"

namespace demi {

namespace {

/// `data` without trailing zero and whitespace bytes (padding some writers add).
std::string_view TrimPadding(std::string_view data) {
  while (!data.empty() && (data.back() == '\0' || data.back() == ' ' || data.back() == '\n' ||
                           data.back() == '\r' || data.back() == '\t')) {
    data.remove_suffix(1);
  }
  return data;
}

/// libjpeg's error manager, reporting instead of printing: a fatal error
/// jumps back to JpegCorruption; the first warning of damaged data is kept.
struct JpegErrors {
  jpeg_error_mgr manager;
  std::jmp_buf fatal;
  char message[JMSG_LENGTH_MAX] = {};
};

/// Keeps the first message, without libjpeg's "Corrupt JPEG data: " (ours
/// says that).
void KeepMessage(j_common_ptr info) {
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  if (errors->message[0] != '\0') return;
  char text[JMSG_LENGTH_MAX] = {};
  info->err->format_message(info, text);
  const std::string_view prefix = "Corrupt JPEG data: ";
  const std::string_view message(text);
  const std::string_view kept =
      StartsWith(message, prefix) ? message.substr(prefix.size()) : message;
  kept.copy(errors->message, sizeof(errors->message) - 1);
}

[[noreturn]] void OnJpegError(j_common_ptr info) {
  KeepMessage(info);
  std::longjmp(reinterpret_cast<JpegErrors*>(info->err)->fatal, 1);
}

/// Level -1 is a warning; the others are traces. Warnings about metadata (an
/// unknown JFIF revision, an Adobe transform, an ICC profile) leave the
/// pixels whole, as do the byte or two of padding some cameras write before
/// the end-of-image marker (FF D9). Damaged data that decodes to the last
/// block early leaves far more unread there.
void OnJpegMessage(j_common_ptr info, int level) {
  if (level != -1) return;
  constexpr int kPaddingBytes = 16;
  const int code = info->err->msg_code;
  const int* parm = info->err->msg_parm.i;
  const bool damaged =
      code == JWRN_HUFF_BAD_CODE || code == JWRN_HIT_MARKER || code == JWRN_MUST_RESYNC ||
      code == JWRN_JPEG_EOF ||
      (code == JWRN_EXTRANEOUS_DATA && (parm[1] != 0xD9 || parm[0] > kPaddingBytes));
  if (damaged) KeepMessage(info);
}

}  // namespace

std::string JpegCorruption(std::string_view data) {
  if (!StartsWith(data, "\xFF\xD8\xFF")) return "";
  JpegErrors errors;
  jpeg_decompress_struct info{};
  info.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = OnJpegError;
  errors.manager.emit_message = OnJpegMessage;
  if (setjmp(errors.fatal) != 0) {  // as OpenCV's decoder would fail too
    jpeg_destroy_decompress(&info);
    return StrCat("does not decode as an image: ", errors.message);
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(data.data()),
               static_cast<unsigned long>(data.size()));
  jpeg_read_header(&info, TRUE);
  const int64_t pixels = static_cast<int64_t>(info.image_width) * info.image_height;
  if (pixels > kMaxImagePixels) {  // a few header bytes must not cost gigabytes
    jpeg_destroy_decompress(&info);
    return StrCat("does not decode as an image: its header declares ", info.image_width, " x ",
                  info.image_height, " pixels, more than the ", kMaxImagePixels, " OpenCV decodes");
  }
  // The entropy-coded data decoded to DCT coefficients: where damage shows,
  // without the inverse DCT, upsampling and colour conversion of a full decode.
  jpeg_read_coefficients(&info);
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return errors.message[0] == '\0' ? "" : StrCat("is a corrupt JPEG: ", errors.message);
}

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

cv::Mat ReadImageFile(const std::string& path, bool is_color, bool check_damage) {
  return DecodeImageBytes(ReadImageBytes(path, check_damage), is_color);
}

std::string ReadImageBytes(const std::string& path, bool check_damage) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status)) throw BadRecordError("is a directory, not an image");
  if (!std::filesystem::exists(status)) throw BadRecordError("does not exist");
  if (!std::filesystem::is_regular_file(status)) throw BadRecordError("is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) throw BadRecordError("cannot be opened");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw BadRecordError("cannot be read");
  const std::string truncation = ImageTruncation(data, data);
  if (!truncation.empty()) throw BadRecordError(StrCat(truncation, " (", data.size(), " bytes)"));
  const std::string corruption = check_damage ? JpegCorruption(data) : "";
  if (!corruption.empty()) throw BadRecordError(corruption);
  return data;
}

cv::Mat DecodeImageBytes(const std::string& data, bool is_color) {
  cv::Mat image;
  try {  // OpenCV throws where a header claims more than OPENCV_IO_MAX_IMAGE_PIXELS pixels
    const cv::Mat bytes(1, static_cast<int>(data.size()), CV_8U, const_cast<char*>(data.data()));
    image = cv::imdecode(bytes, is_color ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE);
  } catch (const cv::Exception& e) {
    throw BadRecordError(StrCat("does not decode as an image: ", e.err));
  }
  if (image.empty()) throw BadRecordError("cannot be read or does not decode as an image");
  return image;
}

}  // namespace demi
