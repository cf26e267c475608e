#ifndef DEMI_LAYERS_NEURON_LAYER_HPP_
#define DEMI_LAYERS_NEURON_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Base of element-wise layers: one bottom, one top of the same shape
/// (possibly the same blob, computed in place).
class NeuronLayer : public Layer {
 public:
  bool CanReplay() const override { return true; }
  using Layer::Layer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override {
    top[0]->ReshapeLike(*bottom[0]);
  }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  /// narrow_blobs() of a layer whose CAFFE engine maps each element in float
  /// from and to any storage type (layers/elementwise.hpp): its blobs stored
  /// alike, in Caffe's layout only (a formula need not map 0 to 0, which the
  /// padded channels of oneDNN's blocked layouts rely on).
  BlobFormats MappedNarrowBlobs() const {
    return NarrowBlobsWhen(engine_.engine == EngineKind::kCaffe, BlobFormats::kUniform);
  }
};

}  // namespace demi

#endif  // DEMI_LAYERS_NEURON_LAYER_HPP_
