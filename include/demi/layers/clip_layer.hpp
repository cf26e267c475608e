#ifndef DEMI_LAYERS_CLIP_LAYER_HPP_
#define DEMI_LAYERS_CLIP_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief y = min(max(x, min), max), element-wise, with clip_param's min and
/// max (both required, min < max).
///
/// Shapes: bottom and top alike (in place allowed, as for ReLU6). Backward
/// reads the top only: min < y < max exactly where min < x < max, so
/// dx = dy there and 0 elsewhere. (Caffe reads x and also passes the gradient
/// at x = min and x = max exactly; the two differ only on those two points,
/// where the function has no derivative.)
class ClipLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Clip"; }
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
  float min_ = 0.0f;
  float max_ = 0.0f;
};

}  // namespace demi

#endif  // DEMI_LAYERS_CLIP_LAYER_HPP_
