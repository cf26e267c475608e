#include "demi/layers/tanh_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/cudnn_ops.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void TanHLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Device device = context_.device;
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  if (top[0]->storage_type() != FLOAT) return MappedNeuronLayer::ForwardOnDevice(bottom, top);
#ifdef USE_CUDNN
  if (device == Device::kGPU && engine_.engine == EngineKind::kCudnn) {
    CudnnActivationForward(CUDNN_ACTIVATION_TANH, n, bottom[0]->gpu_data(),
                           top[0]->mutable_gpu_data());
    return;
  }
#endif
  Tanh(device, n, bottom[0]->data_on(device), top[0]->mutable_data_on(device));
}

void TanHLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                 const std::vector<bool>& propagate_down,
                                 const std::vector<Blob*>& bottom) {
  const Device device = context_.device;
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
  if (bottom[0]->storage_type() != FLOAT) {
    return MappedNeuronLayer::BackwardOnDevice(top, propagate_down, bottom);
  }
#ifdef USE_CUDNN
  if (device == Device::kGPU && engine_.engine == EngineKind::kCudnn) {
    CudnnActivationBackward(CUDNN_ACTIVATION_TANH, n, top[0]->gpu_data(), top[0]->gpu_diff(),
                            bottom[0]->mutable_gpu_diff());
    return;
  }
#endif
  TanhGradient(device, n, top[0]->data_on(device), top[0]->diff_on(device),
               bottom[0]->mutable_diff_on(device));
}

DEMI_REGISTER_LAYER(TanH);

}  // namespace demi
