#include "demi/layers/input_saving_neuron_layer.hpp"

#include <cstring>

#ifndef CPU_ONLY
#include "demi/util/convert_gpu.hpp"
#endif

namespace demi {

void InputSavingNeuronLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                        const std::vector<Blob*>& top) {
  in_place_ = bottom[0] == top[0];
  if (in_place_ && ReadsInput()) {
    RegisterBuffer("bottom_copy", &bottom_copy_, BufferLifetime::kSavedForBackward);
  }
}

void InputSavingNeuronLayer::Reshape(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  NeuronLayer::Reshape(bottom, top);
  if (!in_place_ || !ReadsInput()) return;
  bottom_copy_.set_storage_type(bottom[0]->storage_type());
  bottom_copy_.ReshapeLike(*bottom[0]);
}

void InputSavingNeuronLayer::SaveInput(const Blob& bottom) {
  if (!in_place_ || !ReadsInput() || !runs_backward() || bottom.count() == 0) return;
    // The stored bytes, whatever their type.
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) {
    const Type type = bottom.storage_type();
    GpuConvert(bottom.count(), type, bottom.data()->gpu_data(), type,
               bottom_copy_.data()->mutable_gpu_data());
    return;
  }
#endif
  std::memcpy(bottom_copy_.data()->mutable_cpu_data(), bottom.data()->cpu_data(),
              bottom.count() * bottom.element_bytes());
}

}  // namespace demi
