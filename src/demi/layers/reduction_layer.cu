#include "demi/layers/reduction_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// One block per row: y[i] = coeff * op(x[i, :]), accumulated in double as
/// on the CPU.
__global__ void ReductionForwardKernel(int64_t num, int64_t dim, ReductionParameter::ReductionOp op,
                                       float coeff, const float* x, float* y) {
  __shared__ double shared[kCudaThreads];
  for (int64_t i = blockIdx.x; i < num; i += gridDim.x) {
    const float* row = x + i * dim;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
      const float v = row[j];
      if (op == ReductionParameter::ASUM) {
        sum += fabsf(v);
      } else if (op == ReductionParameter::SUMSQ) {
        sum += static_cast<double>(v) * v;
      } else {
        sum += v;
      }
    }
    double value = BlockSum(sum, shared);
    if (op == ReductionParameter::MEAN) value /= static_cast<double>(dim);
    if (threadIdx.x == 0) y[i] = static_cast<float>(coeff * value);
  }
}

/// dx[i, j] = coeff dy[i] times 1, 1 / dim, sign(x) or 2 x.
__global__ void ReductionBackwardKernel(int64_t n, int64_t dim, ReductionParameter::ReductionOp op,
                                        float coeff, const float* x, const float* dy, float* dx) {
  for (int64_t e = GridStart(); e < n; e += GridStride()) {
    const float g = coeff * dy[e / dim];
    switch (op) {
      case ReductionParameter::SUM:
        dx[e] = g;
        break;
      case ReductionParameter::MEAN:
        dx[e] = g / static_cast<float>(dim);
        break;
      case ReductionParameter::ASUM:
        dx[e] = x[e] > 0 ? g : (x[e] < 0 ? -g : 0.0f);
        break;
      case ReductionParameter::SUMSQ:
        dx[e] = 2.0f * g * x[e];
        break;
    }
  }
}

}  // namespace

// launchers

void ReductionLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (num_ == 0) return;
  const ReductionParameter& param = layer_param_.reduction_param();
  Launch("ReductionForwardKernel", BlockPerItem(num_), ReductionForwardKernel, num_, dim_,
         param.operation(), param.coeff(), bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

void ReductionLayer::Backward_gpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  const int64_t n = bottom[0]->count();
  if (!propagate_down[0] || n == 0) return;
  const ReductionParameter& param = layer_param_.reduction_param();
  const float* x = BackwardReadsBottomData(0) ? bottom[0]->gpu_data() : nullptr;
  Launch("ReductionBackwardKernel", CudaBlocks(n), ReductionBackwardKernel, n, dim_,
         param.operation(), param.coeff(), x, top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
}

}  // namespace demi
