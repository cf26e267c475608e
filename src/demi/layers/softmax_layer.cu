#include "demi/layers/cudnn_ops.hpp"
#include "demi/layers/softmax_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// One thread per (outer i, inner j) column of `channels` values `inner`
/// apart, in the CPU's order: the maximum, the exponentials and their sum,
/// then the quotients. Each thread reads its column before writing it, so
/// the layer may run in place.
__global__ void SoftmaxForwardKernel(int64_t columns, int64_t channels, int64_t inner,
                                     const float* x, float* y) {
  for (int64_t col = GridStart(); col < columns; col += GridStride()) {
    const int64_t start = (col / inner) * channels * inner + col % inner;
    const float* in = x + start;
    float* out = y + start;
    float max_value = in[0];
    for (int64_t c = 1; c < channels; ++c) max_value = fmaxf(max_value, in[c * inner]);
    float sum = 0.0f;
    for (int64_t c = 0; c < channels; ++c) {
      const float e = expf(in[c * inner] - max_value);
      out[c * inner] = e;
      sum += e;
    }
    for (int64_t c = 0; c < channels; ++c) out[c * inner] /= sum;
  }
}

/// dx = y * (dy - sum over c of dy * y), one thread per column; the dot is
/// complete before dx is written (dx and dy are one array in place).
__global__ void SoftmaxBackwardKernel(int64_t columns, int64_t channels, int64_t inner,
                                      const float* y, const float* dy, float* dx) {
  for (int64_t col = GridStart(); col < columns; col += GridStride()) {
    const int64_t start = (col / inner) * channels * inner + col % inner;
    float dot = 0.0f;
    for (int64_t c = 0; c < channels; ++c) dot += dy[start + c * inner] * y[start + c * inner];
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t at = start + c * inner;
      dx[at] = y[at] * (dy[at] - dot);
    }
  }
}

}  // namespace

// launchers

void SoftmaxLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (bottom[0]->count() == 0) return;  // an empty softmax axis has no row to start from
#ifdef USE_CUDNN
  if (engine_.engine == EngineKind::kCudnn) {
    CudnnSoftmaxForward(outer_num_, channels_, inner_num_, bottom[0]->gpu_data(),
                        top[0]->mutable_gpu_data());
    return;
  }
#endif
  const int64_t columns = outer_num_ * inner_num_;
  Launch("SoftmaxForwardKernel", CudaBlocks(columns), SoftmaxForwardKernel, columns, channels_,
         inner_num_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

void SoftmaxLayer::Backward_gpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  if (!propagate_down[0] || top[0]->count() == 0) return;
#ifdef USE_CUDNN
  if (engine_.engine == EngineKind::kCudnn) {
    CudnnSoftmaxBackward(outer_num_, channels_, inner_num_, top[0]->gpu_data(), top[0]->gpu_diff(),
                         bottom[0]->mutable_gpu_diff());
    return;
  }
#endif
  const int64_t columns = outer_num_ * inner_num_;
  Launch("SoftmaxBackwardKernel", CudaBlocks(columns), SoftmaxBackwardKernel, columns, channels_,
         inner_num_, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
