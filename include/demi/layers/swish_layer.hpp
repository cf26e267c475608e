#ifndef DEMI_LAYERS_SWISH_LAYER_HPP_
#define DEMI_LAYERS_SWISH_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief Swish: y = x sigmoid(beta x), element-wise, with beta =
/// swish_param.beta.
///
/// Shapes: bottom and top alike (in place allowed). Backward recomputes
/// s = sigmoid(beta x) from the input, dx = dy (s + beta x s (1 - s)), instead
/// of keeping Caffe's sigmoid buffer beside the top. Out of place it reads the
/// bottom data; in place Forward first copies x into a buffer kept for
/// Backward, and no bottom data is read. The top is never read.
class SwishLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Swish"; }
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

#endif  // DEMI_LAYERS_SWISH_LAYER_HPP_
