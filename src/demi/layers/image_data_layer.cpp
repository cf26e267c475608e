#include "demi/layers/image_data_layer.hpp"

#include <numeric>
#include <opencv2/imgproc.hpp>

#include "demi/data/image_file.hpp"
#include "demi/layer_registry.hpp"

namespace demi {

ImageDataLayer::~ImageDataLayer() { StopPrefetch(); }

std::vector<int64_t> ImageDataLayer::DataLayerSetUp() {
  const ImageDataParameter& param = layer_param_.image_data_param();
  DEMI_CHECK(!param.source().empty(), Owner(), ": image_data_param has no source (the list file)");
  DEMI_CHECK((param.new_height() == 0) == (param.new_width() == 0), Owner(),
             ": image_data_param new_height and new_width must be given together, got ",
             param.new_height(), " and ", param.new_width());
  try {
    lines_ = ReadImageList(param.source());
  } catch (const Error& error) {
    ThrowError(StrCat(Owner(), ": ", error.what()));
  }
  read_cleanly_ = std::make_unique<std::atomic<bool>[]>(lines_.size());
  batch_size_ = param.batch_size();
  skip_bad_records_ = param.skip_bad_records();
  rows_.resize(batch_size_);
  order_.resize(lines_.size());
  ShuffleForEpoch();
  if (param.rand_skip() > 0) {
    RandomEngine engine = RecordEngine(context().seed, -1, -1);
    const uint32_t skip = RandomIndex(&engine, param.rand_skip());
    LOG(INFO) << Owner() << ": skipping the first " << skip << " images";
    for (uint32_t i = 0; i < skip; ++i) SkipExample();
  }
  // The example shape is the first usable image's; with skip_bad_records the
  // bad ones before it are only looked past here, and skipped (and counted)
  // when the batches reach them.
  for (size_t i = 0; i < order_.size(); ++i) {
    rows_[0] = order_[(position_ + i) % order_.size()];
    try {
      return transformer_->OutputShape(LoadImage(rows_[0]));
    } catch (const BadRecordError& error) {
      const std::string message = StrCat(Owner(), ": ", DescribeExample(0), " ", error.what());
      DEMI_CHECK(skip_bad_records_, message, "; ", SkipHint());
      LOG(WARNING) << message << "; looking further for the example shape";
    }
  }
  ThrowError(StrCat(Owner(), ": no image of '", param.source(), "' can be read"));
}

void ImageDataLayer::ShuffleForEpoch() {
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (!layer_param_.image_data_param().shuffle()) return;
  RandomEngine engine = RecordEngine(context().seed, epoch_, -1);
  for (size_t i = order_.size(); i > 1; --i) {
    std::swap(order_[i - 1], order_[RandomIndex(&engine, static_cast<uint32_t>(i))]);
  }
}

void ImageDataLayer::ReadExample(int64_t row, int64_t* index, int64_t* epoch) {
  rows_[row] = order_[position_];
  *index = rows_[row];
  *epoch = epoch_;
  SkipExample();
}

void ImageDataLayer::SkipExample() {
  if (++position_ == static_cast<int64_t>(order_.size())) {
    position_ = 0;
    ++epoch_;
    ShuffleForEpoch();
  }
}

std::string ImageDataLayer::LoadBytes(int64_t line) const {
  const ImageDataParameter& param = layer_param_.image_data_param();
  std::atomic<bool>& clean = read_cleanly_[line];
  std::string bytes = ReadImageBytes(param.root_folder() + lines_[line].path,
                                     !clean.load(std::memory_order_relaxed));
  clean.store(true, std::memory_order_relaxed);
  return bytes;
}

cv::Mat ImageDataLayer::LoadImage(int64_t line) const { return DecodeAndResize(LoadBytes(line)); }

cv::Mat ImageDataLayer::DecodeAndResize(const std::string& bytes) const {
  const ImageDataParameter& param = layer_param_.image_data_param();
  cv::Mat image = DecodeImageBytes(bytes, param.is_color());
  if (param.new_height() > 0) {
    cv::Mat resized;
    cv::resize(image, resized,
               cv::Size(static_cast<int>(param.new_width()), static_cast<int>(param.new_height())),
               0, 0, cv::INTER_LINEAR);
    image = resized;
  }
  return image;
}

bool ImageDataLayer::LoadExample(int64_t row, RandomEngine* engine, const ExampleOut& out,
                                 float* label) {
  const int64_t line = rows_[row];
  const ImageDataParameter& param = layer_param_.image_data_param();
  *label = static_cast<float>(lines_[line].label);
  // The JPEG fast path where it applies (transformer.hpp; not after new_height's
  // resize), else the decoded image as LoadImage gives it.
  const std::string encoded = LoadBytes(line);
  const int channels = param.is_color() ? 3 : 1;
  const std::vector<int64_t>& shape = example_shape();
  if (param.new_height() == 0 &&
      (out.bytes != nullptr
           ? transformer_->TransformJpeg(encoded, channels, shape, engine, out.bytes)
           : transformer_->TransformJpeg(encoded, channels, shape, engine, out.floats))) {
    return true;
  }
  const cv::Mat image = DecodeAndResize(encoded);
  if (out.bytes != nullptr) return transformer_->TransformBytes(image, shape, engine, out.bytes);
  transformer_->Transform(image, shape, engine, out.floats);
  return true;
}

std::string ImageDataLayer::DescribeExample(int64_t row) const {
  const ImageDataParameter& param = layer_param_.image_data_param();
  const ImageListEntry& entry = lines_[rows_[row]];
  return StrCat("image '", param.root_folder(), entry.path, "' (line ", entry.line, " of '",
                param.source(), "')");
}

std::string ImageDataLayer::SkipHint() const {
  return "fix or remove that line of the list file, or set image_data_param { skip_bad_records: "
         "true } to skip and count such images";
}

void ImageDataLayer::SaveSourcePosition(DataReadPosition* position) const {
  position->set_index(position_);
  position->set_epoch(epoch_);
  position->set_source_records(SourceSize());
}

void ImageDataLayer::RestoreSourcePosition(const DataReadPosition& position) {
  epoch_ = position.epoch();
  ShuffleForEpoch();
  position_ = position.index() % SourceSize();
  if (position.source_records() != SourceSize() || position.index() != position_) {
    LOG(WARNING) << Owner() << ": '" << layer_param_.image_data_param().source()
                 << "' changed since the read position was saved (" << position.source_records()
                 << " images then, " << SourceSize() << " now): reading on from place " << position_
                 << " of epoch " << epoch_
                 << ", but the batches differ from an uninterrupted run's";
  }
}

DEMI_REGISTER_LAYER(ImageData);

}  // namespace demi
