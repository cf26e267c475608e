#ifndef DEMI_LAYERS_IMAGE_DATA_LAYER_HPP_
#define DEMI_LAYERS_IMAGE_DATA_LAYER_HPP_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "demi/data/convert.hpp"
#include "demi/layers/base_data_layer.hpp"

namespace demi {

/// @brief Reads images named in a list file of "path label" lines and
/// outputs data (N x C x H x W, after transform_param) and optionally label
/// (N).
///
/// image_data_param: source (the list file), root_folder (prefixed to every
/// path), batch_size, shuffle (a new order every epoch, drawn from
/// (context().seed, epoch)), new_height / new_width (resize every image
/// first; both or neither), is_color, rand_skip. Record index = line of the
/// image in the list (0-based), so an image is augmented the same way
/// whatever the shuffled order. The example shape comes from the first image.
/// Read position: the epoch (which gives its order) and the place in it.
class ImageDataLayer : public BaseDataLayer {
 public:
  using BaseDataLayer::BaseDataLayer;
  ~ImageDataLayer() override;
  const char* type() const override { return "ImageData"; }

 protected:
  std::vector<int64_t> DataLayerSetUp() override;
  int64_t SourceSize() const override { return static_cast<int64_t>(lines_.size()); }
  void ReadExample(int64_t row, int64_t* index, int64_t* epoch) override;
  void SkipExample() override;
  bool LoadExample(int64_t row, RandomEngine* engine, const ExampleOut& out, float* label) override;
  std::string DescribeExample(int64_t row) const override;
  std::string SkipHint() const override;
  void SaveSourcePosition(DataReadPosition* position) const override;
  void RestoreSourcePosition(const DataReadPosition& position) override;

 private:
  /// Reads (and resizes) the image of list entry `line`; BadRecordError if
  /// it is missing or does not decode. A JPEG's data is checked for damage
  /// until it has once read cleanly (the check costs a second entropy
  /// decode; a file read cleanly once stays clean).
  cv::Mat LoadImage(int64_t line) const;
  /// A list entry's file bytes decoded, and resized to new_height x new_width if given.
  cv::Mat DecodeAndResize(const std::string& bytes) const;
  /// The file bytes of list entry `line`, checked as LoadImage checks them.
  std::string LoadBytes(int64_t line) const;
  void ShuffleForEpoch();

  std::vector<ImageListEntry> lines_;
  /// Per line: read cleanly once (decode threads set them).
  std::unique_ptr<std::atomic<bool>[]> read_cleanly_;
  std::vector<int64_t> order_;  ///< this epoch's order of line numbers
  int64_t position_ = 0;        ///< next position in order_
  int64_t epoch_ = 0;
  std::vector<int64_t> rows_;  ///< the line behind each batch row
};

}  // namespace demi

#endif  // DEMI_LAYERS_IMAGE_DATA_LAYER_HPP_
