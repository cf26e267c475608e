#ifndef DEMI_LAYERS_ELU_LAYER_HPP_
#define DEMI_LAYERS_ELU_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief Exponential linear unit, as in Caffe: y = x for x > 0 and
/// y = alpha (exp(x) - 1) otherwise, with alpha = elu_param.alpha >= 0.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only: for alpha >= 0, y > 0 exactly where x > 0, and alpha exp(x) = y + alpha
/// elsewhere, so dx = dy where y > 0 and dx = dy (y + alpha) otherwise. (Caffe
/// also accepts a negative alpha, for which y no longer tells the sign of x;
/// here it is an error.)
class ELULayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "ELU"; }
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
  float alpha_ = 1.0f;
};

}  // namespace demi

#endif  // DEMI_LAYERS_ELU_LAYER_HPP_
