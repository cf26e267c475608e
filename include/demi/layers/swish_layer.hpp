#ifndef DEMI_LAYERS_SWISH_LAYER_HPP_
#define DEMI_LAYERS_SWISH_LAYER_HPP_

#include "demi/layers/input_saving_neuron_layer.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// Swish's formulas, for the host loop and the CUDA kernel alike; both read
/// the input x.
struct SwishForward {
  float beta;
  DEMI_HOST_DEVICE float operator()(float x) const { return x * Sigmoid(beta * x); }
  /// 1 / (1 + exp(-z)) through tanh, which never overflows.
  DEMI_HOST_DEVICE static float Sigmoid(float z) { return 0.5f * tanhf(0.5f * z) + 0.5f; }
};
struct SwishBackward {
  float beta;
  /// Recomputes s = sigmoid(beta x): dx = dy (s + beta x s (1 - s)).
  DEMI_HOST_DEVICE float operator()(float x, float dy) const {
    const float s = SwishForward::Sigmoid(beta * x);
    return dy * (s + beta * x * s * (1.0f - s));
  }
};

/// @brief Swish: y = x sigmoid(beta x), element-wise, with beta =
/// swish_param.beta.
///
/// Shapes: bottom and top alike (in place allowed). Backward recomputes
/// s = sigmoid(beta x) from the input, dx = dy (s + beta x s (1 - s)), instead
/// of keeping Caffe's sigmoid buffer beside the top. Out of place it reads the
/// bottom data; in place Forward first copies x into a buffer kept for
/// Backward, and no bottom data is read. The top is never read. Its blobs
/// may be stored in 16 bits, computed in float.
class SwishLayer : public OneBodyLayer<InputSavingNeuronLayer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  const char* type() const override { return "Swish"; }
  BlobFormats narrow_blobs() const override { return MappedNarrowBlobs(); }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_SWISH_LAYER_HPP_
