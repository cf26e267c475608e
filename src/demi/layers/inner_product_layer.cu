#include "demi/layers/inner_product_layer.hpp"
#include "demi/util/math_gpu.hpp"

namespace demi {

// launchers (the kernels are cuBLAS's and util/math_gpu.cu's)

void InnerProductLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                    const std::vector<Blob*>& top) {
  float* y = top[0]->mutable_gpu_data();
  GpuGemm(false, !transpose_, m_, n_, k_, 1.0f, bottom[0]->gpu_data(), blobs_[0]->gpu_data(), 0.0f,
          y);
  if (bias_term_) GpuAddToRows(m_, n_, blobs_[1]->gpu_data(), y);
}

void InnerProductLayer::Backward_gpu(const std::vector<Blob*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob*>& bottom) {
  const float* dy = top[0]->gpu_diff();
  if (param_propagate_down(0)) {
    const float* x = bottom[0]->gpu_data();
    float* dw = blobs_[0]->mutable_gpu_diff();
    if (transpose_) {
      GpuGemm(true, false, k_, n_, m_, 1.0f, x, dy, 1.0f, dw);  // dW (K x N) += x^T dy
    } else {
      GpuGemm(true, false, n_, k_, m_, 1.0f, dy, x, 1.0f, dw);  // dW (N x K) += dy^T x
    }
  }
  if (bias_term_ && param_propagate_down(1)) GpuSumRows(m_, n_, dy, blobs_[1]->mutable_gpu_diff());
  if (propagate_down[0]) {
    GpuGemm(false, transpose_, m_, k_, n_, 1.0f, dy, blobs_[0]->gpu_data(), 0.0f,
            bottom[0]->mutable_gpu_diff());
  }
}

}  // namespace demi
