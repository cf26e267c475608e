#ifndef DEMI_LAYERS_BNLL_LAYER_HPP_
#define DEMI_LAYERS_BNLL_LAYER_HPP_

#include "demi/layers/elementwise.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// BNLL's formulas, for the host loop and the CUDA kernel alike.
struct BNLLForward {
  /// x + log(1 + exp(-x)) for x > 0, so that exp never overflows.
  DEMI_HOST_DEVICE float operator()(float x) const {
    return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
  }
};
struct BNLLBackward {
  /// dy/dx = sigmoid(x) = 1 - exp(-y), read from the top.
  DEMI_HOST_DEVICE float operator()(float y, float dy) const { return -expm1f(-y) * dy; }
};

/// @brief Binomial normal log likelihood (softplus): y = log(1 + exp(x)),
/// computed as x + log(1 + exp(-x)) for x > 0 so that it never overflows.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only: dy/dx = sigmoid(x) = 1 - exp(-y), so dx = -expm1(-y) dy, accurate for
/// every y >= 0.
class BNLLLayer : public MappedNeuronLayer<BNLLForward, BNLLBackward> {
 public:
  using MappedNeuronLayer::MappedNeuronLayer;
  const char* type() const override { return "BNLL"; }

 protected:
  BNLLForward forward_formula(Type) const override { return {}; }
  BNLLBackward backward_formula(Type) const override { return {}; }
};

}  // namespace demi

#endif  // DEMI_LAYERS_BNLL_LAYER_HPP_
