#ifndef DEMI_LAYERS_BNLL_LAYER_HPP_
#define DEMI_LAYERS_BNLL_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief Binomial normal log likelihood (softplus): y = log(1 + exp(x)),
/// computed as x + log(1 + exp(-x)) for x > 0 so that it never overflows.
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top
/// only: dy/dx = sigmoid(x) = 1 - exp(-y), so dx = -expm1(-y) dy, accurate for
/// every y >= 0.
class BNLLLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  const char* type() const override { return "BNLL"; }
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
};

}  // namespace demi

#endif  // DEMI_LAYERS_BNLL_LAYER_HPP_
