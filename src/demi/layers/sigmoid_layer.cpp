#include "demi/layers/sigmoid_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/cudnn_ops.hpp"
#include "demi/layers/elementwise.hpp"

namespace demi {

void SigmoidLayer::ForwardOnDevice(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
#ifdef USE_CUDNN
  if (context_.device == Device::kGPU && bottom[0]->count() > 0 &&
      engine_.engine == EngineKind::kCudnn) {
    CudnnActivationForward(CUDNN_ACTIVATION_SIGMOID, bottom[0]->count(), bottom[0]->gpu_data(),
                           top[0]->mutable_gpu_data());
    return;
  }
#endif
  MappedNeuronLayer::ForwardOnDevice(bottom, top);
}

void SigmoidLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
#ifdef USE_CUDNN
  if (context_.device == Device::kGPU && top[0]->count() > 0 &&
      engine_.engine == EngineKind::kCudnn) {
    CudnnActivationBackward(CUDNN_ACTIVATION_SIGMOID, top[0]->count(), top[0]->gpu_data(),
                            top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
    return;
  }
#endif
  MappedNeuronLayer::BackwardOnDevice(top, propagate_down, bottom);
}

DEMI_REGISTER_LAYER(Sigmoid);

}  // namespace demi
