#ifndef DEMI_LAYERS_SCALE_LAYER_HPP_
#define DEMI_LAYERS_SCALE_LAYER_HPP_

#include "demi/layer.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/fast_divider.hpp"

namespace demi {

/// @brief Multiplies the bottom by a scale broadcast over it, plus an
/// optional bias, as in Caffe: y = x * s (+ b).
///
/// s has the shape of bottom 0's axes [axis, axis + num_axes) and multiplies
/// every slice of x along the other axes. It is either
/// - a learned param (one bottom), of shape bottom.shape[axis : axis +
///   num_axes] from scale_param (axis default 1, negative counts from the
///   end; num_axes default 1, -1 to the end, 0 for a scalar), filled by
///   scale_param.filler (default constant 1); or
/// - bottom 1 (two bottoms), whose whole shape must match bottom 0's from
///   `axis` on (a scalar bottom 1 applies from axis 0); its gradient flows.
/// With bias_term, a learned b of s's shape (filled by bias_filler, default
/// constant 0) is added; it is the last param blob (blobs[1] with one bottom,
/// blobs[0] with two). Top: bottom 0's shape; in place allowed (ResNet's
/// BatchNorm + Scale).
///
/// Backward: dx = dy * s, ds = the sum of dy * x over the broadcast axes,
/// db = the sum of dy. It reads the bottoms' data (x for ds, bottom 1 for dx)
/// and not the top's; in place, where y has overwritten x, Forward keeps a
/// copy of x (saved for backward) and Backward reads that — or, after an
/// in-place BatchNorm, reads BatchNorm's saved output, which is x.
class ScaleLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Scale"; }
  bool CanReplay() const override { return true; }
  int MinBottomBlobs() const override { return 1; }
  int MaxBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  /// x for ds (from the saved copy when in place) and bottom 1 for dx.
  bool BackwardReadsBottomData(int index) const override { return index == 1 || !in_place_; }
  bool BackwardReadsTopData(int) const override { return false; }
  /// In place after an in-place BatchNorm, x is BatchNorm's saved output:
  /// Scale reads that copy instead of keeping its own.
  bool ShareSavedInput(Blob* saved) override;
  /// Whether the layer scales the channels of an N x C x ... bottom shaped
  /// num x channels x spatial (as last reshaped) by a param, one per
  /// channel: a BatchNorm before it can compute it (BatchNormLayer::Absorb).
  bool ScalesChannels(int64_t num, int64_t channels, int64_t spatial) const {
    return scale_is_param_ && outer_ == num && scale_dim_ == channels && inner_ == spatial;
  }
  /// The index of b in blobs(), or -1 without bias_term.
  int bias_index() const { return bias_index_; }
  BlobFormats blocked_layouts() const override {
    return per_channel() ? BlobFormats::kUniform : BlobFormats::kNone;
  }
  /// The same per-channel loops over 16-bit blobs, in FLOAT; on a GPU, the
  /// CUDA kernels, with the scale a param.
  BlobFormats narrow_blobs() const override {
    return NarrowBlobsWhen(
        per_channel() || (context_.device == Device::kGPU && layer_param_.bottom_size() == 1),
        BlobFormats::kUniform);
  }
  /// Per channel, the CUDA kernels read channels last too, as do the CPU
  /// loops.
  BlobFormats channels_last_layouts() const override {
    if (context_.device == Device::kGPU) {
      return channel_scale_ ? BlobFormats::kUniform : BlobFormats::kNone;
    }
    return blocked_layouts();
  }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  /// Where the channels of `blob` (bottom or top) lie for the CUDA kernels.
  ChannelAxis AxisOnGpu(const Blob& blob) const;
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#endif

 private:
  bool in_place_ = false;
  bool scale_is_param_ = false;  ///< one bottom: s is blobs[0]
  int bias_index_ = -1;          ///< index of b in blobs_, or -1 without bias_term
  int64_t outer_ = 0;            ///< product of bottom 0's axes before `axis`
  int64_t scale_dim_ = 0;        ///< count of s
  int64_t inner_ = 0;            ///< product of bottom 0's axes after s's
  Blob input_;                   ///< in place only: copy of x, saved for backward
  bool input_shared_ = false;    ///< input_ is a view of the previous layer's saved output
  bool channel_scale_ = false;   ///< one scale per channel of a 4-D batch, given as a param
  std::vector<double> sums_;     ///< per channel, scratch of Backward with blocked blobs

  /// channel_scale_, run by the DNNL engine's loops.
  bool per_channel() const { return channel_scale_ && engine_.engine == EngineKind::kDnnl; }

  /// `blob` (bottom 0 or top) as outer x scale x inner in its layout.
  ChannelBlocks Channels(const Blob& blob) const;
  /// Forward_cpu and Backward_cpu over blobs stored as T (float, bfloat16).
  template <typename T>
  void ForwardStored(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top);
  template <typename T>
  void BackwardStored(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                      const std::vector<Blob*>& bottom);
};

}  // namespace demi

#endif  // DEMI_LAYERS_SCALE_LAYER_HPP_
