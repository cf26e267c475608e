#ifndef DEMI_LAYERS_POWER_LAYER_HPP_
#define DEMI_LAYERS_POWER_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief y = (shift + scale x)^power, element-wise, with power_param's power,
/// scale and shift, as in Caffe.
///
/// Shapes: bottom and top alike (in place allowed). The derivative is
/// dx = dy power scale (shift + scale x)^(power - 1). When it is a constant
/// (power = 1, or power scale = 0) Backward reads no data. Otherwise it needs
/// the input: out of place it reads the bottom data; in place Forward first
/// copies x into a buffer kept for Backward, and no bottom data is read. The
/// top is never read.
class PowerLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Power"; }
  bool BackwardReadsBottomData(int) const override { return !ConstantDerivative() && !in_place_; }
  bool BackwardReadsTopData(int) const override { return false; }

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
  /// True when dy/dx = power scale everywhere.
  bool ConstantDerivative() const;

  bool in_place_ = false;
  Blob bottom_copy_;  ///< the input, in place with a varying derivative; saved for backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_POWER_LAYER_HPP_
