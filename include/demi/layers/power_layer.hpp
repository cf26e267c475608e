#ifndef DEMI_LAYERS_POWER_LAYER_HPP_
#define DEMI_LAYERS_POWER_LAYER_HPP_

#include "demi/layers/input_saving_neuron_layer.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// Power's formulas, for the host loop and the CUDA kernel alike.
struct PowerForward {
  float power, scale, shift;
  DEMI_HOST_DEVICE float operator()(float x) const { return powf(shift + scale * x, power); }
};
/// dx = dy power scale (shift + scale x)^(power - 1).
struct PowerBackward {
  float power, scale, shift;
  DEMI_HOST_DEVICE float operator()(float x, float dy) const {
    return dy * (power * scale) * powf(shift + scale * x, power - 1.0f);
  }
};
/// dx = power scale dy, where that derivative is a constant.
struct PowerConstantBackward {
  float diff_scale;
  DEMI_HOST_DEVICE float operator()(float dy) const { return diff_scale * dy; }
};

/// @brief y = (shift + scale x)^power, element-wise, with power_param's power,
/// scale and shift, as in Caffe.
///
/// Shapes: bottom and top alike (in place allowed); they may be stored in 16
/// bits, computed in float. The derivative is
/// dx = dy power scale (shift + scale x)^(power - 1). When it is a constant
/// (power = 1, or power scale = 0) Backward reads no data. Otherwise it needs
/// the input: out of place it reads the bottom data; in place Forward first
/// copies x into a buffer kept for Backward, and no bottom data is read. The
/// top is never read.
class PowerLayer : public OneBodyLayer<InputSavingNeuronLayer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  const char* type() const override { return "Power"; }
  BlobFormats narrow_blobs() const override { return MappedNarrowBlobs(); }

 protected:
  /// False when dy/dx = power scale everywhere.
  bool ReadsInput() const override;
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_POWER_LAYER_HPP_
