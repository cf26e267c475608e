#ifndef DEMI_LAYERS_EXP_LAYER_HPP_
#define DEMI_LAYERS_EXP_LAYER_HPP_

#include "demi/layers/elementwise.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// Exp's formulas, for the host loop and the CUDA kernel alike.
struct ExpForward {
  float inner_scale, outer_scale;
  /// base^(shift + scale x) = base^shift exp(scale ln(base) x).
  DEMI_HOST_DEVICE float operator()(float x) const { return outer_scale * expf(inner_scale * x); }
};
struct ExpBackward {
  float inner_scale;
  DEMI_HOST_DEVICE float operator()(float y, float dy) const { return dy * y * inner_scale; }
};

/// @brief y = base^(shift + scale x), element-wise, with exp_param's base
/// (-1, the default, means e; otherwise base > 0), scale and shift, as in
/// Caffe.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only: dx = dy y scale ln(base).
class ExpLayer : public MappedNeuronLayer<ExpForward, ExpBackward> {
 public:
  using MappedNeuronLayer::MappedNeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Exp"; }

 protected:
  ExpForward forward_formula(Type) const override { return {inner_scale_, outer_scale_}; }
  ExpBackward backward_formula(Type) const override { return {inner_scale_}; }

 private:
  float inner_scale_ = 1.0f;  ///< scale ln(base)
  float outer_scale_ = 1.0f;  ///< base^shift
};

}  // namespace demi

#endif  // DEMI_LAYERS_EXP_LAYER_HPP_
