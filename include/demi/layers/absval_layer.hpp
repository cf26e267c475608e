#ifndef DEMI_LAYERS_ABSVAL_LAYER_HPP_
#define DEMI_LAYERS_ABSVAL_LAYER_HPP_

#include "demi/layers/input_saving_neuron_layer.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// AbsVal's formulas, for the host loop and the CUDA kernel alike; the
/// gradient is the sign of the input x times dy (0 at x = 0).
struct AbsValForward {
  DEMI_HOST_DEVICE float operator()(float x) const { return fabsf(x); }
};
struct AbsValBackward {
  DEMI_HOST_DEVICE float operator()(float x, float dy) const {
    return x > 0 ? dy : (x < 0 ? -dy : 0.0f);
  }
};

/// @brief y = |x|, element-wise.
///
/// Shapes: bottom and top alike. Backward needs the sign of the input:
/// dx = sign(x) dy (0 at x = 0, as in Caffe). Out of place it reads the bottom
/// data; in place (which Caffe refuses) Forward first copies x into a buffer
/// kept for Backward, and no bottom data is read. The top is never read.
/// Its blobs may be stored in 16 bits, computed in float.
class AbsValLayer : public OneBodyLayer<InputSavingNeuronLayer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  const char* type() const override { return "AbsVal"; }
  BlobFormats narrow_blobs() const override { return MappedNarrowBlobs(); }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_ABSVAL_LAYER_HPP_
