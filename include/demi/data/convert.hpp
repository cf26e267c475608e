#ifndef DEMI_DATA_CONVERT_HPP_
#define DEMI_DATA_CONVERT_HPP_

#include <cstdint>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "demi/common.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

// Dataset conversion behind build/tools/convert_mnist, convert_imageset and
// compute_image_mean. Every error names the file, the list line or the record
// key at fault.

/// An IDX file (MNIST's format) of unsigned bytes: its dimensions and values.
struct IdxFile {
  std::vector<int64_t> dims;
  std::string values;
};

/// Reads an IDX file of unsigned bytes, gzip-compressed or not.
IdxFile ReadIdxFile(const std::string& path);

/// Converts MNIST-style IDX image (N x rows x cols) and label (N) files into
/// a new LMDB of raw 1 x rows x cols Datum, keyed "%08d" by position.
/// Returns the number of records written.
int64_t ConvertMnist(const std::string& images_path, const std::string& labels_path,
                     const std::string& db_path);

/// One "path label" line of an image list file; `line` is 1-based.
struct ImageListEntry {
  std::string path;
  int label = 0;
  int64_t line = 0;
};

/// Reads a list file: the label is what follows the last space, so paths
/// may hold spaces; blank lines are ignored. A line without a label, a label
/// that is not an integer, a missing or empty list throw an Error with the
/// file and line.
std::vector<ImageListEntry> ReadImageList(const std::string& path);

/// Reads an image file as ImageData and convert_imageset do: color (BGR) or
/// gray, resized to height x width when both are positive. A file that is
/// missing, does not decode, or that OpenCV refuses (a header claiming more
/// than OPENCV_IO_MAX_IMAGE_PIXELS pixels) throws BadRecordError saying why.
cv::Mat ReadImageFile(const std::string& path, bool is_color, int height, int width);

/// Reads an image file into a Datum, as Caffe's ReadImageToDatum does:
/// resized to height x width when both are positive, gray or color; raw
/// C x H x W bytes, or encoded when `encoding` ("jpg", "png", ...) is given
/// (the file's own bytes when it needs no change; no dimensions then, as in
/// Caffe). Returns the {C, H, W} of the stored image. Throws BadRecordError
/// if the file is missing or does not decode.
std::vector<int64_t> ReadImageToDatum(const std::string& path, int label, int height, int width,
                                      bool is_color, const std::string& encoding, Datum* datum);

/// convert_imageset's flags.
struct ImageSetOptions {
  bool gray = false;
  bool shuffle = false;
  uint32_t shuffle_seed = 1701;
  int resize_height = 0;
  int resize_width = 0;
  bool check_size = false;
  bool encoded = false;
  std::string encode_type;  ///< empty with `encoded`: each file's extension
  bool skip_bad = false;    ///< skip (and count) unreadable images instead of failing
};

struct ConvertStats {
  int64_t written = 0;
  int64_t skipped = 0;
};

/// Converts the images of a list file (paths relative to `root`, which is
/// prefixed as given) into a new LMDB of Datum keyed "%08d_<path>".
ConvertStats ConvertImageSet(const std::string& root, const std::string& list_path,
                             const std::string& db_path, const ImageSetOptions& options);

/// The mean image of an LMDB of Datum (raw or encoded; all of one size), as
/// a 1 x C x H x W BlobProto; `channel_means` receives each channel's mean.
BlobProto ComputeImageMean(const std::string& db_path, std::vector<double>* channel_means);

}  // namespace demi

#endif  // DEMI_DATA_CONVERT_HPP_
