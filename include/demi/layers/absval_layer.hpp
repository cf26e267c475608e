#ifndef DEMI_LAYERS_ABSVAL_LAYER_HPP_
#define DEMI_LAYERS_ABSVAL_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief y = |x|, element-wise.
///
/// Shapes: bottom and top alike. Backward needs the sign of the input:
/// dx = sign(x) dy (0 at x = 0, as in Caffe). Out of place it reads the bottom
/// data; in place (which Caffe refuses) Forward first copies x into a buffer
/// kept for Backward, and no bottom data is read. The top is never read.
class AbsValLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "AbsVal"; }
  bool BackwardReadsBottomData(int) const override { return !in_place_; }
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

 private:
  bool in_place_ = false;
  Blob bottom_copy_;  ///< the input, in place only; saved for backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_ABSVAL_LAYER_HPP_
