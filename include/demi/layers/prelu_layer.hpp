#ifndef DEMI_LAYERS_PRELU_LAYER_HPP_
#define DEMI_LAYERS_PRELU_LAYER_HPP_

#include <vector>

#include "demi/layers/input_saving_neuron_layer.hpp"
#include "demi/util/channel_blocks.hpp"

namespace demi {

/// @brief Parametric ReLU, as in Caffe: y = max(0, x) + a[c] * min(0, x), with
/// one learned slope a[c] per channel c (axis 1), or one slope for every
/// channel with prelu_param.channel_shared.
///
/// Shapes: bottom N x C x ... (at least 2 axes), top alike (in place allowed).
/// The slopes are blobs_[0], of shape (C) or, channel-shared, a scalar, filled
/// by prelu_param.filler (constant 0.25 when none is given). Backward needs the
/// input: dx = dy where x > 0 and a[c] dy elsewhere; da[c] += sum of dy x over
/// the elements of channel c with x <= 0. Out of place it reads the bottom
/// data; in place Forward first copies x into a buffer kept for Backward, and
/// Backward reads neither bottom nor top data. Its blobs may be stored in 16
/// bits, computed in float (the slopes and their gradient stay FLOAT).
class PReLULayer : public InputSavingNeuronLayer {
 public:
  using InputSavingNeuronLayer::InputSavingNeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "PReLU"; }
  BlobFormats narrow_blobs() const override { return MappedNarrowBlobs(); }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#endif

 private:
  /// The bottom as num x slopes x inner: one channel when the slope is shared.
  ChannelBlocks Channels(const Blob& bottom) const;
  template <typename T>
  void ForwardStored(const Blob& bottom, Blob* top);
  template <typename T>
  void BackwardStored(const Blob& top, bool propagate_down, Blob* bottom);

  bool channel_shared_ = false;
  std::vector<double> sums_;  ///< the slope gradient's sums, per channel
};

}  // namespace demi

#endif  // DEMI_LAYERS_PRELU_LAYER_HPP_
