#ifndef DEMI_LAYERS_LOG_LAYER_HPP_
#define DEMI_LAYERS_LOG_LAYER_HPP_

#include "demi/layers/elementwise.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// Log's formulas, for the host loop and the CUDA kernel alike, in double.
struct LogForward {
  float scale, shift;
  double log_base;  ///< ln(base)
  DEMI_HOST_DEVICE float operator()(float x) const {
    return static_cast<float>(log(static_cast<double>(shift + scale * x)) / log_base);
  }
};
struct LogBackward {
  double factor;  ///< scale / ln(base)
  double log_base;
  /// 1 / (shift + scale x) = base^-y = exp(-y ln(base)), read from the top.
  DEMI_HOST_DEVICE float operator()(float y, float dy) const {
    return static_cast<float>(dy * factor * exp(-y * log_base));
  }
};

/// @brief y = log_base(shift + scale x), element-wise, with log_param's base
/// (-1, the default, means e; otherwise base > 0 and base != 1), scale and
/// shift, as in Caffe.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only, recovering shift + scale x = base^y: dx = dy scale / (base^y ln(base)).
class LogLayer : public MappedNeuronLayer<LogForward, LogBackward> {
 public:
  using MappedNeuronLayer::MappedNeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Log"; }

 protected:
  LogForward forward_formula(Type) const override;
  LogBackward backward_formula(Type) const override;

 private:
  double log_base_ = 1.0;  ///< ln(base)
};

}  // namespace demi

#endif  // DEMI_LAYERS_LOG_LAYER_HPP_
