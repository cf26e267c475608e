#include "demi/layers/relu_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/cudnn_ops.hpp"
#include "demi/layers/elementwise.hpp"

namespace demi {

void ReLULayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DnnlSetUp();
}

void ReLULayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  NeuronLayer::Reshape(bottom, top);
  if (dnnl_) DnnlReshape(*bottom[0]);
}

void ReLULayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Device device = context_.device;
  if (device == Device::kCPU && DnnlReady()) {
    DnnlForward(*bottom[0], top[0]);
    return;
  }
  const float slope = layer_param_.relu_param().negative_slope();
  DEMI_CHECK(slope >= 0, "ReLU layer '", layer_param_.name(),
             "' needs a non-negative negative_slope, got ", slope);
#ifdef USE_CUDNN
  if (device == Device::kGPU && engine_.engine == EngineKind::kCudnn && bottom[0]->count() > 0) {
    CudnnActivationForward(CUDNN_ACTIVATION_RELU, bottom[0]->count(), bottom[0]->gpu_data(),
                           top[0]->mutable_gpu_data());
    return;
  }
#endif
  MapForward(device, *bottom[0], top[0], ReLUForward{slope});
}

void ReLULayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                 const std::vector<bool>& propagate_down,
                                 const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const Device device = context_.device;
  if (device == Device::kCPU && DnnlReady()) {
    DnnlBackward(*top[0], bottom[0]);
    return;
  }
  const float slope = layer_param_.relu_param().negative_slope();
#ifdef USE_CUDNN
  if (device == Device::kGPU && engine_.engine == EngineKind::kCudnn && top[0]->count() > 0) {
    CudnnActivationBackward(CUDNN_ACTIVATION_RELU, top[0]->count(), top[0]->gpu_data(),
                            top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
    return;
  }
#endif
  MapBackward(device, *top[0], *top[0], bottom[0], ReLUBackward{slope});
}

DEMI_REGISTER_LAYER(ReLU);

}  // namespace demi
