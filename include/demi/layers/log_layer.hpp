#ifndef DEMI_LAYERS_LOG_LAYER_HPP_
#define DEMI_LAYERS_LOG_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief y = log_base(shift + scale x), element-wise, with log_param's base
/// (-1, the default, means e; otherwise base > 0 and base != 1), scale and
/// shift, as in Caffe.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only, recovering shift + scale x = base^y: dx = dy scale / (base^y ln(base)).
class LogLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Log"; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return true; }

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
  double log_base_ = 1.0;  ///< ln(base)
};

}  // namespace demi

#endif  // DEMI_LAYERS_LOG_LAYER_HPP_
