#ifndef DEMI_LAYERS_SIGMOID_LAYER_HPP_
#define DEMI_LAYERS_SIGMOID_LAYER_HPP_

#include "demi/layers/elementwise.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// Sigmoid's formulas, for the host loop and the CUDA kernel alike.
struct SigmoidForward {
  /// 1 / (1 + exp(-x)) == (1 + tanh(x / 2)) / 2, which never overflows.
  DEMI_HOST_DEVICE float operator()(float x) const { return 0.5f * tanhf(0.5f * x) + 0.5f; }
};
struct SigmoidBackward {
  DEMI_HOST_DEVICE float operator()(float y, float dy) const { return dy * y * (1.0f - y); }
};

/// @brief Logistic sigmoid: y = 1 / (1 + exp(-x)), element-wise.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only: dx = dy * y * (1 - y); it reads no bottom data.
class SigmoidLayer : public MappedNeuronLayer<SigmoidForward, SigmoidBackward> {
 public:
  using MappedNeuronLayer::MappedNeuronLayer;
  const char* type() const override { return "Sigmoid"; }

 protected:
  SigmoidForward forward_formula(Type) const override { return {}; }
  SigmoidBackward backward_formula(Type) const override { return {}; }
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_SIGMOID_LAYER_HPP_
