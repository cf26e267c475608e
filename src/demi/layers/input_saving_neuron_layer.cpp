#include "demi/layers/input_saving_neuron_layer.hpp"

#include "demi/util/device_math.hpp"

namespace demi {

void InputSavingNeuronLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                        const std::vector<Blob*>& top) {
  in_place_ = bottom[0] == top[0];
  if (in_place_) RegisterBuffer("bottom_copy", &bottom_copy_, BufferLifetime::kSavedForBackward);
}

void InputSavingNeuronLayer::Reshape(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  NeuronLayer::Reshape(bottom, top);
  if (in_place_) bottom_copy_.ReshapeLike(*bottom[0]);
}

void InputSavingNeuronLayer::SaveInput(const Blob& bottom) {
  if (!in_place_ || !runs_backward()) return;
  const Device device = context_.device;
  Copy(device, bottom.count(), bottom.data_on(device), bottom_copy_.mutable_data_on(device));
}

}  // namespace demi
