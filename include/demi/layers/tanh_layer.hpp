#ifndef DEMI_LAYERS_TANH_LAYER_HPP_
#define DEMI_LAYERS_TANH_LAYER_HPP_

#include "demi/layers/elementwise.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// TanH's formulas, for blobs stored in 16 bits (host loop and CUDA kernel).
struct TanHForward {
  DEMI_HOST_DEVICE float operator()(float x) const { return tanhf(x); }
};
struct TanHBackward {
  DEMI_HOST_DEVICE float operator()(float y, float dy) const { return dy * (1.0f - y * y); }
};

/// @brief Hyperbolic tangent: y = tanh(x), element-wise.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only: dx = dy * (1 - y^2); it reads no bottom data. FLOAT blobs run
/// cuDNN's activation or util/math's vectorized Tanh; 16-bit ones the map.
class TanHLayer : public MappedNeuronLayer<TanHForward, TanHBackward> {
 public:
  using MappedNeuronLayer::MappedNeuronLayer;
  const char* type() const override { return "TanH"; }

 protected:
  TanHForward forward_formula(Type) const override { return {}; }
  TanHBackward backward_formula(Type) const override { return {}; }
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_TANH_LAYER_HPP_
