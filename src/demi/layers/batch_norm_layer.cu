#include "demi/layers/batch_norm_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

struct BnShape {
  int64_t num, channels, spatial;
  ChannelOf channel_of;  ///< the channel of an element; its `inner` divides by spatial
  BnShape(int64_t n, int64_t c, int64_t s) : num(n), channels(c), spatial(s), channel_of(s, c) {}
};

/// Element j of channel c's m = num * spatial values.
__device__ inline int64_t At(int64_t j, int64_t c, const BnShape& s) {
  const int64_t o = s.channel_of.inner.Divide(j);
  return (o * s.channels + c) * s.spatial + (j - o * s.spatial);
}

/// One block per channel: the batch mean and biased variance (two passes in
/// double, as the CPU), the running sums, and inv_std = 1 / sqrt(var + eps).
__global__ void BatchStatsKernel(const float* x, BnShape s, float fraction, float correction,
                                 float eps, float* mean, float* inv_std, float* mean_sum,
                                 float* var_sum, float* factor) {
  __shared__ double shared[kCudaThreads];
  const int64_t m = s.num * s.spatial;
  for (int64_t c = blockIdx.x; c < s.channels; c += gridDim.x) {
    double sum = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) sum += x[At(j, c, s)];
    const double mu = m > 0 ? BlockSum(sum, shared) / static_cast<double>(m) : 0.0;
    double sumsq = 0;
    for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
      const double d = x[At(j, c, s)] - mu;
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
  ElementwiseInto(n, y, [=](int64_t i) {
    const int64_t c = s.channel_of(i);
    return (x[i] - mean[c]) * inv_std[c];
  });
}

/// dx = dy inv_std[c] (global statistics); in place allowed.
__global__ void ScaleDiffKernel(int64_t n, const float* dy, const float* inv_std, BnShape s,
                                float* dx) {
  ElementwiseInto(n, dx, [=](int64_t i) { return dy[i] * inv_std[s.channel_of(i)]; });
}

/// The terms of BatchNorm's backward sums: dy and dy y.
struct DiffTerms {
  const float* y;
  const float* dy;
  __device__ DoublePair operator()(int64_t i) const {
    return {static_cast<double>(dy[i]), static_cast<double>(dy[i]) * y[i]};
  }
};

/// dx = inv_std (dy - mean(dy) - y mean(dy y)) from the channels' sums of dy
/// and dy y (`sums`, over m values each); dx may alias dy.
__global__ void BatchDiffKernel(int64_t n, const float* y, const float* dy, const float* inv_std,
                                const DoublePair* sums, int64_t m, BnShape s, float* dx) {
  ElementwiseInto(n, dx, [=](int64_t i) {
    const int64_t c = s.channel_of(i);
    const float mean_dy = static_cast<float>(sums[c].a / static_cast<double>(m));
    const float mean_dy_y = static_cast<float>(sums[c].b / static_cast<double>(m));
    return inv_std[c] * (dy[i] - mean_dy - y[i] * mean_dy_y);
  });
}

/// scale_bias: y = gamma[c] y + beta[c] (beta null: y = gamma[c] y), in place.
__global__ void ChannelAffineKernel(int64_t n, const float* gamma, const float* beta, BnShape s,
                                    float* y) {
  ElementwiseInto(n, y, [=](int64_t i) {
    const int64_t c = s.channel_of(i);
    return beta ? gamma[c] * y[i] + beta[c] : gamma[c] * y[i];
  });
}

}  // namespace

// launchers

void BatchNormLayer::AffineForward_gpu(Blob* top) {
  const int64_t n = top->count();
  if (n == 0) return;
  Launch("ChannelAffineKernel", ElementwiseBlocks(n), ChannelAffineKernel, n, blobs_[3]->gpu_data(),
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
  Launch("ChannelAffineKernel", ElementwiseBlocks(n), ChannelAffineKernel, n, blobs_[3]->gpu_data(),
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
  Launch("NormalizeKernel", ElementwiseBlocks(n), NormalizeKernel, n, bottom[0]->gpu_data(), mean,
         inv_std, s, y);
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
    Launch("ScaleDiffKernel", ElementwiseBlocks(n), ScaleDiffKernel, n, dy, inv_std, s, dx);
    return;
  }
#ifdef USE_CUDNN
  if (cudnn_ && !in_place_ && !scale_bias_ && num_ * spatial_ > 1) {
    CudnnBackward(*top[0], bottom[0]);
    return;
  }
#endif
  const float* y = keeps_x_norm() ? x_norm_.gpu_data() : top[0]->gpu_data();
  // The sums are taken before dx overwrites dy (in place): the stream orders them.
  const DoublePair* sums =
      GpuChannelReduce<DoublePair>(num_, channels_, spatial_, DiffTerms{y, dy});
  Launch("BatchDiffKernel", ElementwiseBlocks(n), BatchDiffKernel, n, y, dy, inv_std, sums,
         num_ * spatial_, s, dx);
}

}  // namespace demi
