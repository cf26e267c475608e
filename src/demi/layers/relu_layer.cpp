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

BlobFormats ReLULayer::narrow_blobs() const {
  // On a GPU, cuDNN or our kernels (ForwardStoredGpu); on the CPU, oneDNN
  // or the CAFFE engine's loop.
  const bool gpu = context_.device == Device::kGPU;
  return NarrowBlobsWhen(gpu || DnnlReady() || engine_.engine == EngineKind::kCaffe,
                         BlobFormats::kUniform);
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
  [[maybe_unused]] const Type type = top[0]->storage_type();
#ifdef USE_CUDNN
  if (device == Device::kGPU && engine_.engine == EngineKind::kCudnn &&
      CudnnPoolsAndActivatesIn(type)) {
    const int64_t n = bottom[0]->count();
    if (n > 0) {  // in the blobs' storage type
      CudnnActivationForward(CUDNN_ACTIVATION_RELU, n, bottom[0]->data()->gpu_data(),
                             top[0]->data()->mutable_gpu_data(), type);
    }
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
  [[maybe_unused]] const Type type = top[0]->storage_type();
#ifdef USE_CUDNN
  if (device == Device::kGPU && engine_.engine == EngineKind::kCudnn &&
      CudnnPoolsAndActivatesIn(type)) {
    const int64_t n = top[0]->count();
    if (n > 0) {
      CudnnActivationBackward(CUDNN_ACTIVATION_RELU, n, top[0]->data()->gpu_data(),
                              top[0]->diff()->gpu_data(), bottom[0]->diff()->mutable_gpu_data(),
                              type);
    }
    return;
  }
#endif
  MapBackward(device, *top[0], *top[0], bottom[0], ReLUBackward{slope});
}

AbsorbedReLU AbsorbedReLU::Of(const Layer& layer) {
  const float slope = layer.layer_param().relu_param().negative_slope();
  return {slope >= 0, slope};
}

DEMI_REGISTER_LAYER(ReLU);

}  // namespace demi
