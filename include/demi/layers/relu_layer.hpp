#ifndef DEMI_LAYERS_RELU_LAYER_HPP_
#define DEMI_LAYERS_RELU_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief Rectified linear unit: y = max(0, x) + negative_slope * min(0, x).
///
/// Shapes: bottom and top alike (in place allowed). Backward reads the top:
/// y > 0 exactly where x > 0 (for a non-negative slope), so the in-place form
/// needs no copy of the input; it reads no bottom data.
class ReLULayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  const char* type() const override { return "ReLU"; }
  /// Element-wise: any layout, the same for bottom and top.
  BlockedLayouts blocked_layouts() const override { return BlockedLayouts::kUniform; }
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

#endif  // DEMI_LAYERS_RELU_LAYER_HPP_
