#ifndef DEMI_LAYERS_INPUT_SAVING_NEURON_LAYER_HPP_
#define DEMI_LAYERS_INPUT_SAVING_NEURON_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief A neuron layer whose Backward reads its input x (AbsVal, Swish,
/// Power, PReLU). Run in place, Forward overwrites x, so the layer keeps a
/// copy of it ("bottom_copy", saved for backward, in the bottom's storage
/// type) that Forward takes with SaveInput; Backward then reads Input(). Out
/// of place, Backward reads the bottom.
class InputSavingNeuronLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  bool BackwardReadsBottomData(int) const override { return ReadsInput() && !in_place_; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  /// Whether Backward reads x at all (Power's constant derivative does not).
  virtual bool ReadsInput() const { return true; }
  /// Copies x on context().device where the layer runs in place and its
  /// Backward will read it; before Forward writes the top.
  void SaveInput(const Blob& bottom);
  /// x for Backward: the bottom, or its copy when in place.
  const Blob& Input(const Blob& bottom) const { return in_place_ ? bottom_copy_ : bottom; }

 private:
  bool in_place_ = false;
  Blob bottom_copy_;  ///< the input, in place only
};

}  // namespace demi

#endif  // DEMI_LAYERS_INPUT_SAVING_NEURON_LAYER_HPP_
