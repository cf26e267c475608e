#include "demi/layers/image_data_layer.hpp"

#include <filesystem>
#include <numeric>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

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
  batch_size_ = param.batch_size();
  rows_.resize(batch_size_);
  order_.resize(lines_.size());
  ShuffleForEpoch();
  if (param.rand_skip() > 0) {
    RandomEngine engine = RecordEngine(context().seed, -1, -1);
    const uint32_t skip = RandomIndex(&engine, param.rand_skip());
    LOG(INFO) << Owner() << ": skipping the first " << skip << " images";
    for (uint32_t i = 0; i < skip; ++i) SkipExample();
  }
  const int64_t first = order_[position_];
  try {
    return transformer_->OutputShape(LoadImage(first));
  } catch (const BadRecordError& error) {
    rows_[0] = first;
    ThrowError(StrCat(Owner(), ": ", DescribeExample(0), " ", error.what()));
  }
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

cv::Mat ImageDataLayer::LoadImage(int64_t line) const {
  const ImageDataParameter& param = layer_param_.image_data_param();
  return ReadImageFile(param.root_folder() + lines_[line].path, param.is_color(),
                       static_cast<int>(param.new_height()), static_cast<int>(param.new_width()));
}

void ImageDataLayer::LoadExample(int64_t row, RandomEngine* engine, float* out, float* label) {
  const int64_t line = rows_[row];
  transformer_->Transform(LoadImage(line), example_shape(), engine, out);
  *label = static_cast<float>(lines_[line].label);
}

std::string ImageDataLayer::DescribeExample(int64_t row) const {
  const ImageDataParameter& param = layer_param_.image_data_param();
  const ImageListEntry& entry = lines_[rows_[row]];
  return StrCat("image '", param.root_folder(), entry.path, "' (line ", entry.line, " of '",
                param.source(), "')");
}

std::string ImageDataLayer::SkipHint() const { return "fix or remove that line of the list file"; }

DEMI_REGISTER_LAYER(ImageData);

}  // namespace demi
