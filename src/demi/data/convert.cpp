#include "demi/data/convert.hpp"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "demi/blob.hpp"
#include "demi/data/db.hpp"
#include "demi/data/image_file.hpp"
#include "demi/data/staged_lmdb.hpp"
#include "demi/data/transformer.hpp"
#include "demi/util/io.hpp"

namespace demi {

namespace {

constexpr size_t kRecordsPerCommit = 1000;

std::string Gunzip(const std::string& bytes, const std::string& path) {
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::GzipInputStream gzip(&raw, google::protobuf::io::GzipInputStream::GZIP);
  std::string out;
  const void* chunk = nullptr;
  int size = 0;
  while (gzip.Next(&chunk, &size)) out.append(static_cast<const char*>(chunk), size);
  const char* message = gzip.ZlibErrorMessage();
  DEMI_CHECK(gzip.ZlibErrorCode() >= 0, "file '", path, "' is not valid gzip data",
             message != nullptr ? StrCat(": ", message) : std::string());
  return out;
}

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

/// "jpg" for "a/b.JPEG", "" when there is no extension.
std::string EncodingOf(const std::string& path) {
  std::string extension = Lowercase(std::filesystem::path(path).extension().string());
  if (!extension.empty()) extension.erase(0, 1);
  return extension == "jpeg" ? "jpg" : extension;
}

std::string Key(int64_t index, const std::string& suffix = "") {
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%08lld", static_cast<long long>(index));
  return suffix.empty() ? std::string(digits) : StrCat(digits, "_", suffix);
}

std::string Dims(const std::vector<int64_t>& shape) {
  return StrCat(shape[0], "x", shape[1], "x", shape[2]);
}

}  // namespace

IdxFile ReadIdxFile(const std::string& path) {
  std::string bytes = ReadFileToString(path);
  if (bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f &&
      static_cast<uint8_t>(bytes[1]) == 0x8b) {
    bytes = Gunzip(bytes, path);
  }
  DEMI_CHECK(bytes.size() >= 4, "IDX file '", path, "' is too short (", bytes.size(),
             " bytes) to hold a header");
  const auto* header = reinterpret_cast<const uint8_t*>(bytes.data());
  DEMI_CHECK(header[0] == 0 && header[1] == 0, "'", path,
             "' is not an IDX file: its magic number does not start with two zero bytes");
  DEMI_CHECK(header[2] == 0x08, "IDX file '", path, "' holds element type 0x", std::hex,
             static_cast<int>(header[2]), std::dec, "; only unsigned bytes (0x08) are supported");
  const int rank = header[3];
  const size_t header_size = 4 + 4 * static_cast<size_t>(rank);
  DEMI_CHECK(rank >= 1 && bytes.size() >= header_size, "IDX file '", path,
             "' has a bad header (rank ", rank, ", ", bytes.size(), " bytes)");
  IdxFile file;
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    const uint8_t* d = header + 4 + 4 * i;
    const int64_t dim = (int64_t{d[0]} << 24) | (int64_t{d[1]} << 16) | (int64_t{d[2]} << 8) | d[3];
    file.dims.push_back(dim);
    count *= dim;
  }
  const auto payload = static_cast<int64_t>(bytes.size() - header_size);
  DEMI_CHECK(payload == count, "IDX file '", path, "': its dimensions ", ShapeString(file.dims),
             " need ", count, " bytes of values, but it holds ", payload,
             payload < count ? " (truncated?)" : "");
  file.values = bytes.substr(header_size);
  return file;
}

int64_t ConvertMnist(const std::string& images_path, const std::string& labels_path,
                     const std::string& db_path) {
  const IdxFile images = ReadIdxFile(images_path);
  const IdxFile labels = ReadIdxFile(labels_path);
  DEMI_CHECK(images.dims.size() == 3, "'", images_path, "' holds ", images.dims.size(),
             "-D data; MNIST images are 3-D (count x rows x cols)");
  DEMI_CHECK(labels.dims.size() == 1, "'", labels_path, "' holds ", labels.dims.size(),
             "-D data; MNIST labels are 1-D");
  const int64_t count = images.dims[0];
  DEMI_CHECK(count == labels.dims[0], "'", images_path, "' holds ", count, " images but '",
             labels_path, "' holds ", labels.dims[0], " labels");
  // As convert_imageset refuses an empty list: an empty database would be
  // refused only later, by the Data layer reading it.
  DEMI_CHECK(count > 0, "'", images_path, "' holds no images: nothing to convert");
  const int64_t rows = images.dims[1], cols = images.dims[2];
  StagedLMDB db(db_path);
  std::unique_ptr<LMDBTransaction> txn = db.db().NewTransaction();
  Datum datum;
  datum.set_channels(1);
  datum.set_height(static_cast<int>(rows));
  datum.set_width(static_cast<int>(cols));
  for (int64_t i = 0; i < count; ++i) {
    datum.set_data(images.values.data() + i * rows * cols, rows * cols);
    datum.set_label(static_cast<uint8_t>(labels.values[i]));
    txn->Put(Key(i), datum.SerializeAsString());
    if (txn->size() == kRecordsPerCommit) txn->Commit();
  }
  txn->Commit();
  txn.reset();
  db.Publish();
  LOG(INFO) << "Wrote " << count << " " << rows << "x" << cols << " images to " << db_path;
  return count;
}

std::vector<ImageListEntry> ReadImageList(const std::string& path) {
  std::ifstream in(path);
  DEMI_CHECK(in.good(), "cannot open image list '", path, "': ", std::strerror(errno));
  std::vector<ImageListEntry> entries;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const size_t space = line.find_last_of(" \t");
    DEMI_CHECK(space != std::string::npos, path, ":", number, ": '", line,
               "' has no label; each line must be \"<path> <label>\"");
    const std::string label_text = line.substr(space + 1);
    ImageListEntry entry;
    const auto [end, error] =
        std::from_chars(label_text.data(), label_text.data() + label_text.size(), entry.label);
    const bool whole = end == label_text.data() + label_text.size();
    DEMI_CHECK(!whole || error != std::errc::result_out_of_range, path, ":", number, ": label '",
               label_text, "' is out of range: labels are 32-bit integers, at most ",
               std::numeric_limits<int>::max());
    DEMI_CHECK(error == std::errc() && whole, path, ":", number, ": label '", label_text,
               "' is not an integer");
    entry.path = line.substr(0, space);
    while (!entry.path.empty() && std::isspace(static_cast<unsigned char>(entry.path.back()))) {
      entry.path.pop_back();
    }
    DEMI_CHECK(!entry.path.empty(), path, ":", number, ": '", line, "' has no image path");
    entry.line = number;
    entries.push_back(std::move(entry));
  }
  DEMI_CHECK(!in.bad(), "error reading image list '", path, "'");
  DEMI_CHECK(!entries.empty(), "image list '", path, "' is empty: it names no image");
  return entries;
}

std::vector<int64_t> ReadImageToDatum(const std::string& path, int label, int height, int width,
                                      bool is_color, const std::string& encoding, Datum* datum) {
  cv::Mat image = ReadImageFile(path, is_color);
  const bool resize = height > 0 && width > 0;
  if (resize) {
    cv::Mat resized;
    cv::resize(image, resized, cv::Size(width, height), 0, 0, cv::INTER_LINEAR);
    image = resized;
  }
  datum->Clear();
  datum->set_label(label);
  const int channels = image.channels();
  if (!encoding.empty()) {
    const std::string wanted = Lowercase(encoding) == "jpeg" ? "jpg" : Lowercase(encoding);
    if (!resize && is_color && EncodingOf(path) == wanted) {
      datum->set_data(ReadFileToString(path));
    } else {
      std::vector<uchar> buffer;
      bool encoded = false;
      try {
        encoded = cv::imencode("." + wanted, image, buffer);
      } catch (const cv::Exception&) {
        encoded = false;
      }
      DEMI_CHECK(encoded, "cannot encode images as '", encoding, "'");
      datum->set_data(buffer.data(), buffer.size());
    }
    datum->set_encoded(true);
  } else {
    datum->set_channels(channels);
    datum->set_height(image.rows);
    datum->set_width(image.cols);
    std::string* data = datum->mutable_data();
    data->resize(static_cast<size_t>(channels) * image.rows * image.cols);
    for (int h = 0; h < image.rows; ++h) {
      const uchar* row = image.ptr<uchar>(h);
      for (int w = 0; w < image.cols; ++w) {
        for (int c = 0; c < channels; ++c) {
          (*data)[(static_cast<size_t>(c) * image.rows + h) * image.cols + w] =
              static_cast<char>(row[w * channels + c]);
        }
      }
    }
  }
  return {channels, image.rows, image.cols};
}

ConvertStats ConvertImageSet(const std::string& root, const std::string& list_path,
                             const std::string& db_path, const ImageSetOptions& options) {
  DEMI_CHECK(options.resize_height >= 0 && options.resize_width >= 0,
             "resize_height and resize_width must not be negative (0: no resize), got ",
             options.resize_height, " and ", options.resize_width);
  DEMI_CHECK((options.resize_height > 0) == (options.resize_width > 0),
             "resize_height and resize_width must be given together, got ", options.resize_height,
             " and ", options.resize_width);
  std::vector<ImageListEntry> entries = ReadImageList(list_path);
  if (options.shuffle) {
    RandomEngine engine(options.shuffle_seed);
    for (size_t i = entries.size(); i > 1; --i) {
      std::swap(entries[i - 1], entries[RandomIndex(&engine, static_cast<uint32_t>(i))]);
    }
  }
  // Written under a temporary name: a failure leaves no database at db_path.
  StagedLMDB db(db_path);
  std::unique_ptr<LMDBTransaction> txn = db.db().NewTransaction();
  ConvertStats stats;
  std::vector<int64_t> first_shape;
  Datum datum;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ImageListEntry& entry = entries[i];
    const std::string path = root + entry.path;
    std::string encoding = options.encode_type;
    if (options.encoded && encoding.empty()) {
      encoding = EncodingOf(entry.path);
      DEMI_CHECK(!encoding.empty(), list_path, ":", entry.line, ": image '", path,
                 "' has no extension to take the encoding from; set --encode_type");
    }
    std::vector<int64_t> shape;
    try {
      shape = ReadImageToDatum(path, entry.label, options.resize_height, options.resize_width,
                               !options.gray, encoding, &datum);
    } catch (const BadRecordError& error) {
      const std::string message =
          StrCat(list_path, ":", entry.line, ": image '", path, "' ", error.what());
      DEMI_CHECK(options.skip_bad, message, "; pass --skip_bad_records to skip such images");
      LOG(WARNING) << message << "; skipped";
      ++stats.skipped;
      continue;
    }
    if (options.check_size) {
      if (first_shape.empty()) first_shape = shape;
      DEMI_CHECK(shape == first_shape, list_path, ":", entry.line, ": image '", path, "' is ",
                 Dims(shape), " but the first image is ", Dims(first_shape),
                 " (--check_size); resize with --resize_height and --resize_width");
    }
    txn->Put(Key(static_cast<int64_t>(i), entry.path), datum.SerializeAsString());
    ++stats.written;
    if (txn->size() == kRecordsPerCommit) {
      txn->Commit();
      LOG(INFO) << "Processed " << i + 1 << " files.";
    }
  }
  txn->Commit();
  txn.reset();
  DEMI_CHECK(stats.written > 0, "no image of '", list_path, "' could be converted");
  db.Publish();
  LOG(INFO) << "Wrote " << stats.written << " images to " << db_path
            << (stats.skipped > 0 ? StrCat(", skipped ", stats.skipped, " bad ones") : "");
  return stats;
}

BlobProto ComputeImageMean(const std::string& db_path, std::vector<double>* channel_means) {
  std::shared_ptr<LMDB> db = LMDB::Open(db_path, DBMode::kRead);
  DEMI_CHECK(db->Count() > 0, "LMDB '", db_path, "' is empty: it has no mean");
  const Transformer transformer(TransformationParameter(), TEST,
                                StrCat("compute_image_mean of '", db_path, "'"));
  RandomEngine engine(0);  // unused: no random step is enabled
  std::vector<int64_t> shape;
  std::vector<double> sums;
  std::vector<float> image;
  int64_t count = 0;
  Datum datum;
  for (std::unique_ptr<LMDBCursor> cursor = db->NewCursor(); cursor->valid(); cursor->Next()) {
    const std::string_view value = cursor->value();
    try {
      if (!datum.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
        throw BadRecordError(StrCat("is not a Datum (", value.size(), " bytes)"));
      }
      const std::vector<int64_t> record_shape = transformer.OutputShape(datum);
      if (shape.empty()) {
        shape = record_shape;
        sums.assign(shape[0] * shape[1] * shape[2], 0.0);
        image.resize(sums.size());
      }
      if (record_shape != shape) {
        throw BadRecordError(StrCat("is ", Dims(record_shape), " but the first record is ",
                                    Dims(shape), "; a mean needs images of one size"));
      }
      transformer.Transform(datum, shape, &engine, image.data());
    } catch (const BadRecordError& error) {
      ThrowError(StrCat("record '", cursor->key(), "' of '", db_path, "' ", error.what()));
    }
    for (size_t i = 0; i < sums.size(); ++i) sums[i] += image[i];
    ++count;
  }
  BlobProto mean;
  mean.set_num(1);
  mean.set_channels(static_cast<int>(shape[0]));
  mean.set_height(static_cast<int>(shape[1]));
  mean.set_width(static_cast<int>(shape[2]));
  const int64_t spatial = shape[1] * shape[2];
  channel_means->assign(shape[0], 0.0);
  for (size_t i = 0; i < sums.size(); ++i) {
    const double value = sums[i] / static_cast<double>(count);
    mean.add_data(static_cast<float>(value));
    (*channel_means)[i / spatial] += value / static_cast<double>(spatial);
  }
  LOG(INFO) << "Mean of " << count << " " << Dims(shape) << " images of " << db_path;
  return mean;
}

}  // namespace demi
