#ifndef DEMI_DATA_JPEG_REGION_HPP_
#define DEMI_DATA_JPEG_REGION_HPP_

#include <opencv2/core.hpp>
#include <string_view>

#include "demi/data/transformer.hpp"  // CropRect

namespace demi {

/// What a JPEG's header says, read without decoding any pixels.
struct JpegHeader {
  int height = 0;
  int width = 0;
  int components = 0;  ///< 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK
  bool progressive = false;
  /// EXIF orientation (1 to 8; 1 when absent): OpenCV's imdecode turns the
  /// image upright for values above 1.
  int orientation = 1;
};

/// Reads the header of `data`. Returns false when `data` is not a JPEG (no
/// start-of-image marker); throws BadRecordError, with libjpeg's reason,
/// when it is one whose header does not decode.
bool ReadJpegHeader(std::string_view data, JpegHeader* header);

/// The smallest DCT scale M of 1, 2, 4 and 8 (libjpeg decodes at M/8) at
/// which a crop of crop_height x crop_width full-size pixels still has at
/// least out_height x out_width pixels: decoding smaller would make the
/// resize upsample where the full-size path does not. 8 when the output is
/// larger. (libjpeg-turbo also offers 3, 5, 6 and 7, without SIMD: slower
/// than 8.)
int JpegScaleFor(double crop_height, double crop_width, int out_height, int out_width);

/// A region of a JPEG decoded at a DCT scale.
struct JpegRegion {
  cv::Mat image;      ///< CV_8UC1 or CV_8UC3 (B, G, R), as imdecode gives
  int scale_num = 8;  ///< decoded at scale_num / 8
  int top = 0;        ///< where image(0, 0) lies in the scaled image
  int left = 0;
  int scaled_height = 0;  ///< the whole scaled image's size
  int scaled_width = 0;
};

/// Decodes the pixels of `rect` (full-size coordinates) at scale M/8: the
/// scaled rows and columns that rect covers, [floor(y M/8), ceil((y+h) M/8))
/// and likewise for columns. Rows above are skipped (jpeg_skip_scanlines),
/// rows below never read, and columns outside decoded only as far as
/// libjpeg's iMCU alignment needs (jpeg_crop_scanline). `channels` is 1 (the
/// luma, as imdecode's IMREAD_GRAYSCALE) or 3 (B, G, R). At M = 8 the pixels
/// equal cv::imdecode's for the same rect. CMYK JPEGs are not handled
/// (ReadJpegHeader's components == 4: decode them in full). Throws
/// BadRecordError with libjpeg's reason where the data does not decode.
JpegRegion DecodeJpegRegion(std::string_view data, const CropRect& rect, int scale_num,
                            int channels);

}  // namespace demi

#endif  // DEMI_DATA_JPEG_REGION_HPP_
