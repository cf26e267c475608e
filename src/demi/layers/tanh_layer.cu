#include "demi/layers/cudnn_ops.hpp"
#include "demi/layers/tanh_layer.hpp"
#include "demi/util/math_gpu.hpp"

namespace demi {

// launchers (the CAFFE engine's kernels are util/math_gpu.cu's)

void TanHLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
#ifdef USE_CUDNN
  if (WantsCudnn(layer_param_.tanh_param().engine(), context_)) {
    CudnnActivationForward(CUDNN_ACTIVATION_TANH, n, bottom[0]->gpu_data(),
                           top[0]->mutable_gpu_data());
    return;
  }
#endif
  GpuTanh(n, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

void TanHLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  const int64_t n = top[0]->count();
  if (!propagate_down[0] || n == 0) return;
#ifdef USE_CUDNN
  if (WantsCudnn(layer_param_.tanh_param().engine(), context_)) {
    CudnnActivationBackward(CUDNN_ACTIVATION_TANH, n, top[0]->gpu_data(), top[0]->gpu_diff(),
                            bottom[0]->mutable_gpu_diff());
    return;
  }
#endif
  GpuTanhGradient(n, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
