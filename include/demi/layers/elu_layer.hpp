#ifndef DEMI_LAYERS_ELU_LAYER_HPP_
#define DEMI_LAYERS_ELU_LAYER_HPP_

#include "demi/layers/elementwise.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// ELU's formulas, for the host loop and the CUDA kernel alike.
struct ELUForward {
  float alpha;
  DEMI_HOST_DEVICE float operator()(float x) const { return x > 0 ? x : alpha * expm1f(x); }
};
struct ELUBackward {
  float alpha;
  /// Reads the top: for alpha >= 0, y > 0 exactly where x > 0, and
  /// alpha exp(x) = y + alpha elsewhere.
  DEMI_HOST_DEVICE float operator()(float y, float dy) const {
    return y > 0 ? dy : dy * (y + alpha);
  }
};

/// @brief Exponential linear unit, as in Caffe: y = x for x > 0 and
/// y = alpha (exp(x) - 1) otherwise, with alpha = elu_param.alpha >= 0.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only: for alpha >= 0, y > 0 exactly where x > 0, and alpha exp(x) = y + alpha
/// elsewhere, so dx = dy where y > 0 and dx = dy (y + alpha) otherwise. (Caffe
/// also accepts a negative alpha, for which y no longer tells the sign of x;
/// here it is an error.)
class ELULayer : public MappedNeuronLayer<ELUForward, ELUBackward> {
 public:
  using MappedNeuronLayer::MappedNeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "ELU"; }

 protected:
  ELUForward forward_formula(Type) const override { return {alpha_}; }
  ELUBackward backward_formula(Type) const override { return {alpha_}; }

 private:
  float alpha_ = 1.0f;
};

}  // namespace demi

#endif  // DEMI_LAYERS_ELU_LAYER_HPP_
