#include "demi/layers/deconv_layer.hpp"
#include "demi/util/cuda.hpp"

namespace demi {

// launchers (the kernels are the shared helpers of base_conv_layer.cu)

void DeconvolutionLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* w = blobs_[0]->gpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    const float* x = bottom[i]->gpu_data();
    float* y = top[i]->mutable_gpu_data();
#ifdef USE_CUDNN
    if (CudnnReady()) {
      CudnnConvolveAdjoint(x, w, y);
      if (bias_term_) CudnnAddBias(y);
      continue;
    }
#endif
    for (int64_t n = 0; n < num_; ++n) BackwardGemmGpu(x + n * in_size, w, y + n * out_size);
    if (bias_term_) AddBiasGpu(y);
  }
}

void DeconvolutionLayer::Backward_gpu(const std::vector<Blob*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob*>& bottom) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* w = blobs_[0]->gpu_data();
  const bool weight_grad = param_propagate_down(0);
  const bool bias_grad = bias_term_ && param_propagate_down(1);
  for (size_t i = 0; i < top.size(); ++i) {
    const float* dy = top[i]->gpu_diff();
#ifdef USE_CUDNN
    if (CudnnReady()) {
      // The top is the convolution's image, the bottom its output.
      if (bias_grad) CudnnBiasGradient(dy);
      if (weight_grad)
        CudnnWeightGradient(dy, bottom[i]->gpu_data(), blobs_[0]->mutable_gpu_diff());
      if (propagate_down[i]) CudnnConvolve(dy, w, bottom[i]->mutable_gpu_diff());
      continue;
    }
#endif
    if (bias_grad) AccumulateBiasGradientGpu(dy);
    if (!weight_grad && !propagate_down[i]) continue;
    const float* x = bottom[i]->gpu_data();
    for (int64_t n = 0; n < num_; ++n) {
      // dW += x * columns(dy)^T and dx = W * columns(dy), unfolding dy once.
      if (weight_grad) {
        WeightGemmGpu(dy + n * out_size, x + n * in_size, blobs_[0]->mutable_gpu_diff());
      }
      if (propagate_down[i]) {
        ForwardGemmGpu(dy + n * out_size, w, bottom[i]->mutable_gpu_diff() + n * in_size,
                       weight_grad);
      }
    }
  }
}

}  // namespace demi
