#ifndef DEMI_LAYERS_TANH_LAYER_HPP_
#define DEMI_LAYERS_TANH_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief Hyperbolic tangent: y = tanh(x), element-wise.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only: dx = dy * (1 - y^2); it reads no bottom data.
class TanHLayer : public OneBodyLayer<NeuronLayer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  const char* type() const override { return "TanH"; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return true; }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_TANH_LAYER_HPP_
