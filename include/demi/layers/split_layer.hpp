#ifndef DEMI_LAYERS_SPLIT_LAYER_HPP_
#define DEMI_LAYERS_SPLIT_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Gives one blob to several consumers: every top shares the bottom's
/// data, and Backward sums the tops' gradients into the bottom's. The net
/// inserts these automatically. Backward reads no data.
class SplitLayer : public OneBodyLayer<Layer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Split"; }
  bool CanReplay() const override { return true; }
  /// The tops share the bottom's data; their diffs add element-wise.
  BlobFormats blocked_layouts() const override { return BlobFormats::kUniform; }
  /// Channels last too, on either device: any layout the blobs share.
  BlobFormats channels_last_layouts() const override { return BlobFormats::kUniform; }
  /// 16-bit blobs too, on both devices: the gradients add in FLOAT.
  BlobFormats narrow_blobs() const override { return NarrowBlobsWhen(true, BlobFormats::kUniform); }
  int ExactNumBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;

 private:
  /// Backward of BFLOAT16 or FLOAT16 blobs: the tops' gradients, pointed to
  /// from a vector sized at Reshape (no allocation per step).
  template <typename Half>
  void SumHalfDiffs(const std::vector<Blob*>& top, Blob* bottom);
#ifndef CPU_ONLY
  /// The same on the GPU (split_layer.cu).
  void SumHalfDiffsGpu(const std::vector<Blob*>& top, Blob* bottom);
#endif
  std::vector<const void*> top_diffs_;
};

}  // namespace demi

#endif  // DEMI_LAYERS_SPLIT_LAYER_HPP_
