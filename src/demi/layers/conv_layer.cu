#include "demi/layers/conv_layer.hpp"
#include "demi/util/cuda.hpp"

namespace demi {

// launchers (the kernels are the shared helpers of base_conv_layer.cu)

void ConvolutionLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* w = blobs_[0]->gpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    const float* x = bottom[i]->gpu_data();
    float* y = top[i]->mutable_gpu_data();
#ifdef USE_CUDNN
    if (CudnnReady()) {
      CudnnConvolve(x, w, y);
      if (bias_term_) CudnnAddBias(y);
      continue;
    }
#endif
    for (int64_t n = 0; n < num_; ++n) ForwardGemmGpu(x + n * in_size, w, y + n * out_size);
    if (bias_term_) AddBiasGpu(y);
  }
}

void ConvolutionLayer::Backward_gpu(const std::vector<Blob*>& top,
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
      if (bias_grad) CudnnBiasGradient(dy);
      if (weight_grad)
        CudnnWeightGradient(bottom[i]->gpu_data(), dy, blobs_[0]->mutable_gpu_diff());
      if (propagate_down[i]) CudnnConvolveAdjoint(dy, w, bottom[i]->mutable_gpu_diff());
      continue;
    }
#endif
    if (bias_grad) AccumulateBiasGradientGpu(dy);
    if (!weight_grad && !propagate_down[i]) continue;
    const float* x = bottom[i]->gpu_data();
    for (int64_t n = 0; n < num_; ++n) {
      if (weight_grad) {
        WeightGemmGpu(x + n * in_size, dy + n * out_size, blobs_[0]->mutable_gpu_diff());
      }
      if (propagate_down[i]) {
        BackwardGemmGpu(dy + n * out_size, w, bottom[i]->mutable_gpu_diff() + n * in_size);
      }
    }
  }
}

}  // namespace demi
