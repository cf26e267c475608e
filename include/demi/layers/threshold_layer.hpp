#ifndef DEMI_LAYERS_THRESHOLD_LAYER_HPP_
#define DEMI_LAYERS_THRESHOLD_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// Threshold's step, for the host loop and the CUDA kernel alike.
struct ThresholdForward {
  float threshold;
  DEMI_HOST_DEVICE float operator()(float x) const { return x > threshold ? 1.0f : 0.0f; }
};

/// @brief Step function: y = 1 where x > threshold_param.threshold, else 0.
///
/// Shapes: bottom and top alike (in place allowed); they may be stored in 16
/// bits. Not differentiable, as in Caffe: force_backward does not reach the
/// bottom, and a Backward asked for the bottom's gradient is an error.
/// Backward reads no data.
class ThresholdLayer : public OneBodyLayer<NeuronLayer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  const char* type() const override { return "Threshold"; }
  bool AllowForceBackward(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }
  BlobFormats narrow_blobs() const override { return MappedNarrowBlobs(); }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_THRESHOLD_LAYER_HPP_
