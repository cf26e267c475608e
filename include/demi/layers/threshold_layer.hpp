#ifndef DEMI_LAYERS_THRESHOLD_LAYER_HPP_
#define DEMI_LAYERS_THRESHOLD_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief Step function: y = 1 where x > threshold_param.threshold, else 0.
///
/// Shapes: bottom and top alike (in place allowed). Not differentiable, as in
/// Caffe: force_backward does not reach the bottom, and a Backward asked for
/// the bottom's gradient is an error. Backward reads no data.
class ThresholdLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  const char* type() const override { return "Threshold"; }
  bool AllowForceBackward(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

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

#endif  // DEMI_LAYERS_THRESHOLD_LAYER_HPP_
