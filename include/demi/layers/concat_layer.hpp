#ifndef DEMI_LAYERS_CONCAT_LAYER_HPP_
#define DEMI_LAYERS_CONCAT_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Joins its bottoms along one axis, as in Caffe.
///
/// Bottoms: K blobs with the same number of axes and the same dimensions
/// except along concat_param.axis (default 1, negative counts from the end;
/// the legacy concat_dim gives a non-negative axis, and only one of the two
/// may be set). Top: that shape with the axis' dimension the sum of the
/// bottoms', bottom 0 first. With one bottom the top shares its data and diff.
///
/// Backward splits the top's gradient back into the bottoms; it reads no
/// data.
class ConcatLayer : public OneBodyLayer<Layer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Concat"; }
  bool CanReplay() const override { return true; }
  /// Along channels of channel-blocked blobs, each part is whole blocks: the
  /// copies are the same as in Caffe's layout.
  BlobFormats blocked_layouts() const override {
    return axis_ == 1 ? BlobFormats::kUniform : BlobFormats::kNone;
  }
  /// The parts and the whole may all be 16-bit, on either device: the
  /// copies move elements.
  BlobFormats narrow_blobs() const override { return NarrowBlobsWhen(true, BlobFormats::kUniform); }
  /// Along channels, channels last too: each pixel's row holds the parts'
  /// channels side by side.
  BlobFormats channels_last_layouts() const override {
    return axis_ == 1 ? BlobFormats::kUniform : BlobFormats::kNone;
  }
  int MinBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;

 private:
  /// Whether the copies run channels last: the whole (top) is.
  bool ChannelsLast(const Blob& whole) const;

  int axis_ = 1;
};

}  // namespace demi

#endif  // DEMI_LAYERS_CONCAT_LAYER_HPP_
