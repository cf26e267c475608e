#ifndef DEMI_LAYERS_EXP_LAYER_HPP_
#define DEMI_LAYERS_EXP_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief y = base^(shift + scale x), element-wise, with exp_param's base
/// (-1, the default, means e; otherwise base > 0), scale and shift, as in
/// Caffe.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only: dx = dy y scale ln(base).
class ExpLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Exp"; }
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
  float inner_scale_ = 1.0f;  ///< scale ln(base)
  float outer_scale_ = 1.0f;  ///< base^shift
};

}  // namespace demi

#endif  // DEMI_LAYERS_EXP_LAYER_HPP_
