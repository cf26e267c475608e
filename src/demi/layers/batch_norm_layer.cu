#include "demi/layers/batch_norm_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// Element j of channel c's m = num * spatial values.
__device__ inline int64_t At(int64_t j, int64_t c, int64_t channels, int64_t spatial) {
  return (j / spatial * channels + c) * spatial + j % spatial;
}

struct BnShape {
  int64_t num, channels, spatial;
};

/// One block per channel: the batch mean and biased variance (two passes in
/// double, as the CPU), the running sums, and inv_std = 1 / sqrt(var + eps).
__global__ void BatchStatsKernel(const float* x, BnShape s, float fraction, float correction,
                                 float eps, float* mean, float* inv_std, float* mean_sum,
                                 float* var_sum, float* factor) {
  __shared__ double shared[kCudaThreads];
  const int64_t m = s.num * s.spatial;
  for (int64_t c = blockIdx.x; c < s.channels; c += gridDim.x) {
    double sum = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) sum += x[At(j, c, s.channels, s.spatial)];
    const double mu = m > 0 ? BlockSum(sum, shared) / static_cast<double>(m) : 0.0;
    double sumsq = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const double d = x[At(j, c, s.channels, s.spatial)] - mu;
      sumsq += d * d;
    }
    const double total = BlockSum(sumsq, shared);
    if (threadIdx.x == 0) {
      const float var = m > 0 ? static_cast<float>(total / static_cast<double>(m)) : 0.0f;
      mean[c] = static_cast<float>(mu);
      // fraction 0 overwrites, as the CPU's Axpby: an old NaN does not survive.
      mean_sum[c] = fraction == 0.0f ? mean[c] : mean[c] + fraction * mean_sum[c];
      var_sum[c] = fraction == 0.0f ? correction * var : correction * var + fraction * var_sum[c];
      inv_std[c] = 1.0f / sqrtf(var + eps);
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) factor[0] = factor[0] * fraction + 1.0f;
}

/// One thread per channel: mean and inv_std from the running sums.
__global__ void GlobalStatsKernel(int64_t channels, const float* mean_sum, const float* var_sum,
                                  const float* factor, float eps, float* mean, float* inv_std) {
  for (int64_t c = GridStart(); c < channels; c += GridStride()) {
    const float scale = factor[0] == 0.0f ? 0.0f : 1.0f / factor[0];
    mean[c] = mean_sum[c] * scale;
    inv_std[c] = 1.0f / sqrtf(var_sum[c] * scale + eps);
  }
}

/// y = (x - mean[c]) inv_std[c]; in place allowed.
__global__ void NormalizeKernel(int64_t n, const float* x, const float* mean, const float* inv_std,
                                BnShape s, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const int64_t c = i / s.spatial % s.channels;
    y[i] = (x[i] - mean[c]) * inv_std[c];
  }
}

/// dx = dy inv_std[c] (global statistics); in place allowed.
__global__ void ScaleDiffKernel(int64_t n, const float* dy, const float* inv_std, BnShape s,
                                float* dx) {
  for (int64_t i = GridStart(); i < n; i += GridStride())
    dx[i] = dy[i] * inv_std[i / s.spatial % s.channels];
}

/// One block per channel: dx = inv_std (dy - mean(dy) - y mean(dy y)). The
/// block reads all of its channel's dy before writing dx, so dx may alias dy.
__global__ void BatchDiffKernel(const float* y, const float* dy, const float* inv_std, BnShape s,
                                float* dx) {
  __shared__ double shared[kCudaThreads];
  const int64_t m = s.num * s.spatial;
  for (int64_t c = blockIdx.x; c < s.channels; c += gridDim.x) {
    double sum_dy = 0, sum_dy_y = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const int64_t at = At(j, c, s.channels, s.spatial);
      sum_dy += dy[at];
      sum_dy_y += static_cast<double>(dy[at]) * y[at];
    }
    const float mean_dy = static_cast<float>(BlockSum(sum_dy, shared) / static_cast<double>(m));
    const float mean_dy_y = static_cast<float>(BlockSum(sum_dy_y, shared) / static_cast<double>(m));
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const int64_t at = At(j, c, s.channels, s.spatial);
      dx[at] = inv_std[c] * (dy[at] - mean_dy - y[at] * mean_dy_y);
    }
  }
}

/// scale_bias: y = gamma[c] y + beta[c] (beta null: y = gamma[c] y), in place.
__global__ void ChannelAffineKernel(int64_t n, const float* gamma, const float* beta, BnShape s,
                                    float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const int64_t c = i / s.spatial % s.channels;
    y[i] = beta ? gamma[c] * y[i] + beta[c] : gamma[c] * y[i];
  }
}

}  // namespace

// launchers

void BatchNormLayer::AffineForward_gpu(Blob* top) {
  const int64_t n = top->count();
  if (n == 0) return;
  Launch("ChannelAffineKernel", CudaBlocks(n), ChannelAffineKernel, n, blobs_[3]->gpu_data(),
         blobs_[4]->gpu_data(), BnShape{num_, channels_, spatial_}, top->mutable_gpu_data());
}

void BatchNormLayer::AffineBackward_gpu(Blob* top, bool propagate_down) {
  const float* dy = top->gpu_diff();
  // gamma's gradient sums dy x_hat, beta's dy, as on the CPU.
  if (param_propagate_down(3)) {
    GpuChannelSums(num_, channels_, spatial_, true, GradientTerm{dy, x_norm_.gpu_data()},
                   blobs_[3]->mutable_gpu_diff());
  }
  if (param_propagate_down(4)) {
    GpuChannelSums(num_, channels_, spatial_, true, GradientTerm{dy, nullptr},
                   blobs_[4]->mutable_gpu_diff());
  }
  const int64_t n = top->count();
  if (!propagate_down || n == 0) return;
  Launch("ChannelAffineKernel", CudaBlocks(n), ChannelAffineKernel, n, blobs_[3]->gpu_data(),
         nullptr, BnShape{num_, channels_, spatial_}, top->mutable_gpu_diff());
}

void BatchNormLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
#ifdef USE_CUDNN
  if (CudnnForwardReady()) {
    CudnnForward(*bottom[0], top[0]);
    return;
  }
#endif
  const BnShape s{num_, channels_, spatial_};
  float* mean = mean_.mutable_gpu_data();
  float* inv_std = inv_std_.mutable_gpu_data();
  if (use_global_stats_) {
    Launch("GlobalStatsKernel", CudaBlocks(channels_), GlobalStatsKernel, channels_,
           blobs_[0]->gpu_data(), blobs_[1]->gpu_data(), blobs_[2]->gpu_data(), eps_, mean,
           inv_std);
  } else {
    const int64_t m = num_ * spatial_;
    const float correction = m > 1 ? static_cast<float>(m) / static_cast<float>(m - 1) : 1.0f;
    Launch("BatchStatsKernel", BlockPerItem(channels_), BatchStatsKernel, bottom[0]->gpu_data(), s,
           moving_average_fraction_, correction, eps_, mean, inv_std, blobs_[0]->mutable_gpu_data(),
           blobs_[1]->mutable_gpu_data(), blobs_[2]->mutable_gpu_data());
  }
  const int64_t n = top[0]->count();
  if (n == 0) return;
  float* y = top[0]->mutable_gpu_data();
  Launch("NormalizeKernel", CudaBlocks(n), NormalizeKernel, n, bottom[0]->gpu_data(), mean, inv_std,
         s, y);
  if (keeps_x_norm() && runs_backward()) GpuCopy(n, y, x_norm_.mutable_gpu_data());
  if (scale_bias_) AffineForward_gpu(top[0]);
}

void BatchNormLayer::Backward_gpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  if (scale_bias_) AffineBackward_gpu(top[0], propagate_down[0]);
  if (!propagate_down[0]) return;
  const int64_t n = bottom[0]->count();
  if (n == 0) return;
  const BnShape s{num_, channels_, spatial_};
  const float* dy = top[0]->gpu_diff();
  float* dx = bottom[0]->mutable_gpu_diff();  // may be dy (in place)
  const float* inv_std = inv_std_.gpu_data();
  if (use_global_stats_) {
    Launch("ScaleDiffKernel", CudaBlocks(n), ScaleDiffKernel, n, dy, inv_std, s, dx);
    return;
  }
#ifdef USE_CUDNN
  if (cudnn_ && !in_place_ && !scale_bias_ && num_ * spatial_ > 1) {
    CudnnBackward(*top[0], bottom[0]);
    return;
  }
#endif
  const float* y = keeps_x_norm() ? x_norm_.gpu_data() : top[0]->gpu_data();
  Launch("BatchDiffKernel", BlockPerItem(channels_), BatchDiffKernel, y, dy, inv_std, s, dx);
}

}  // namespace demi
