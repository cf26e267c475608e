#include "demi/data/jpeg_region.hpp"

// jpeglib.h needs FILE and size_t declared before it.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstring>

namespace demi {

namespace {

constexpr unsigned kExifMarker = JPEG_APP0 + 1;

/// A decompressor over bytes in memory whose fatal errors jump back to the
/// caller's setjmp (libjpeg's default error_exit would exit the process)
/// and whose warnings are dropped: imdecode decodes damaged data anyway.
struct Decompressor {
  jpeg_decompress_struct info{};
  jpeg_error_mgr manager{};
  std::jmp_buf fatal;
  char message[JMSG_LENGTH_MAX] = {};

  explicit Decompressor(std::string_view data) {
    info.err = jpeg_std_error(&manager);
    manager.error_exit = [](j_common_ptr common) {
      // `info` is the struct's first member: the struct starts at `common`.
      auto* self = reinterpret_cast<Decompressor*>(common);
      common->err->format_message(common, self->message);
      std::longjmp(self->fatal, 1);
    };
    manager.emit_message = [](j_common_ptr, int) {};
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(data.data()),
                 static_cast<unsigned long>(data.size()));
  }
  ~Decompressor() { jpeg_destroy_decompress(&info); }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  [[noreturn]] void Fail(size_t bytes) const {
    throw BadRecordError(
        StrCat("does not decode as an image: ", message, " (", bytes, " bytes of encoded data)"));
  }
};
static_assert(offsetof(Decompressor, info) == 0, "error_exit finds the Decompressor at info");

bool IsJpeg(std::string_view data) {
  return data.size() >= 3 && data.compare(0, 3, "\xFF\xD8\xFF") == 0;
}

/// The orientation tag (0x0112) of an EXIF APP1 segment's first IFD, or 1.
int ExifOrientation(const unsigned char* data, size_t size) {
  if (size < 14 || std::memcmp(data, "Exif\0\0", 6) != 0) return 1;
  const unsigned char* tiff = data + 6;
  const size_t length = size - 6;
  const bool little = tiff[0] == 'I' && tiff[1] == 'I';
  if (!little && !(tiff[0] == 'M' && tiff[1] == 'M')) return 1;
  auto read = [&](size_t at, int bytes) -> uint32_t {
    uint32_t value = 0;
    for (int i = 0; i < bytes; ++i) {
      const uint32_t byte = tiff[at + (little ? bytes - 1 - i : i)];
      value = (value << 8) | byte;
    }
    return value;
  };
  const uint32_t ifd = read(4, 4);
  if (ifd > length || length - ifd < 2) return 1;
  const uint32_t entries = read(ifd, 2);
  for (uint32_t e = 0; e < entries; ++e) {
    const size_t at = ifd + 2 + static_cast<size_t>(e) * 12;
    if (at + 12 > length) return 1;
    if (read(at, 2) == 0x0112) {
      const uint32_t value = read(at + 8, 2);
      return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
    }
  }
  return 1;
}

}  // namespace

bool ReadJpegHeader(std::string_view data, JpegHeader* header) {
  if (!IsJpeg(data)) return false;
  Decompressor jpeg(data);
  if (setjmp(jpeg.fatal) != 0) jpeg.Fail(data.size());
  jpeg_save_markers(&jpeg.info, kExifMarker, 0xFFFF);
  jpeg_read_header(&jpeg.info, TRUE);
  header->height = static_cast<int>(jpeg.info.image_height);
  header->width = static_cast<int>(jpeg.info.image_width);
  header->components = jpeg.info.num_components;
  header->progressive = jpeg.info.progressive_mode != 0;
  header->orientation = 1;
  for (jpeg_saved_marker_ptr m = jpeg.info.marker_list; m != nullptr; m = m->next) {
    if (m->marker == kExifMarker) {
      header->orientation = ExifOrientation(m->data, m->data_length);
      break;
    }
  }
  return true;
}

int JpegScaleFor(double crop_height, double crop_width, int out_height, int out_width) {
  // Only 1, 2, 4 and 8: libjpeg-turbo's SIMD inverse DCTs are 8x8, 4x4 and
  // 2x2 (1x1 is trivial); its 3x3, 5x5, 6x6 and 7x7 ones are plain C and,
  // with the upsampling they need, decode slower than 8/8 does.
  for (int m = 1; m < 8; m *= 2) {
    if (crop_height * m >= 8.0 * out_height && crop_width * m >= 8.0 * out_width) return m;
  }
  return 8;
}

JpegRegion DecodeJpegRegion(std::string_view data, const CropRect& rect, int scale_num,
                            int channels) {
  DEMI_CHECK(scale_num >= 1 && scale_num <= 8, "DecodeJpegRegion: scale ", scale_num,
             "/8 is not one libjpeg decodes at (1/8 to 8/8)");
  DEMI_CHECK(channels == 1 || channels == 3, "DecodeJpegRegion: ", channels,
             " channels asked for; a JPEG decodes to 1 or 3");
  JpegRegion region;
  region.scale_num = scale_num;
  cv::Mat rows;  // declared before setjmp: a longjmp back must not skip a destructor
  Decompressor jpeg(data);
  if (setjmp(jpeg.fatal) != 0) jpeg.Fail(data.size());
  jpeg_read_header(&jpeg.info, TRUE);
  // The caller chose the path and the rect from the same header (ReadJpegHeader).
  DEMI_CHECK(jpeg.info.num_components != 4,
             "DecodeJpegRegion: a CMYK JPEG takes the full decode, not a region");
  DEMI_CHECK(rect.x >= 0 && rect.y >= 0 && rect.width > 0 && rect.height > 0 &&
                 rect.x + rect.width <= static_cast<int>(jpeg.info.image_width) &&
                 rect.y + rect.height <= static_cast<int>(jpeg.info.image_height),
             "DecodeJpegRegion: the crop ", rect.width, "x", rect.height, "+", rect.x, "+", rect.y,
             " lies outside the ", jpeg.info.image_width, "x", jpeg.info.image_height, " image");
  jpeg.info.scale_num = static_cast<unsigned>(scale_num);
  jpeg.info.scale_denom = 8;
  jpeg.info.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_EXT_BGR;
  jpeg_start_decompress(&jpeg.info);
  const int scaled_h = static_cast<int>(jpeg.info.output_height);
  const int scaled_w = static_cast<int>(jpeg.info.output_width);
  region.scaled_height = scaled_h;
  region.scaled_width = scaled_w;
  // The scaled pixels rect covers: scaled pixel k spans full-size [8k/M, 8(k+1)/M).
  const double s = scale_num / 8.0;
  const int top = std::max(0, static_cast<int>(std::floor(rect.y * s)));
  const int bottom = std::min(scaled_h, static_cast<int>(std::ceil((rect.y + rect.height) * s)));
  const int left = std::max(0, static_cast<int>(std::floor(rect.x * s)));
  const int right = std::min(scaled_w, static_cast<int>(std::ceil((rect.x + rect.width) * s)));
  region.top = top;
  region.left = left;
  // Fancy (smooth) chroma upsampling treats a partial row's ends as the
  // image's edges (libjpeg.txt, jpeg_crop_scanline): decoding a few columns
  // more on each side keeps the pixels of [left, right) as a full decode's.
  constexpr int kMargin = 4;
  JDIMENSION x_offset = static_cast<JDIMENSION>(std::max(0, left - kMargin));
  JDIMENSION x_width = static_cast<JDIMENSION>(std::min(scaled_w, right + kMargin)) - x_offset;
  if (x_width < static_cast<JDIMENSION>(scaled_w)) {
    jpeg_crop_scanline(&jpeg.info, &x_offset, &x_width);
  }
  const int decoded_w = static_cast<int>(jpeg.info.output_width);
  rows.create(bottom - top, decoded_w, CV_8UC(channels));
  if (top > 0) jpeg_skip_scanlines(&jpeg.info, static_cast<JDIMENSION>(top));
  for (int r = 0; r < rows.rows; ++r) {
    JSAMPROW row = rows.ptr<JSAMPLE>(r);
    if (jpeg_read_scanlines(&jpeg.info, &row, 1) != 1) {
      std::snprintf(jpeg.message, sizeof(jpeg.message), "scanline %d did not decode", top + r);
      jpeg.Fail(data.size());
    }
  }
  // The rows below are never decoded; abort rather than finish.
  jpeg_abort_decompress(&jpeg.info);
  region.image = rows(cv::Rect(left - static_cast<int>(x_offset), 0, right - left, rows.rows));
  return region;
}

}  // namespace demi
