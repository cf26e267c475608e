#include "demi/layers/batch_norm_layer.hpp"
#include "demi/util/convert_gpu.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

// kernels: written once over the type T the blobs are stored in (float,
// float16, bfloat16), in float arithmetic (util/stored_types.cuh)

/// A blob's channel axis (Caffe's layout or channels last): the channel of
/// each element.
struct BnShape {
  ChannelOf channel_of;
  explicit BnShape(const ChannelAxis& axis) : channel_of(axis.channel_of()) {}
};

/// The terms of a channel's two sums, taken in one pass (GpuChannelReduce,
/// each channel cut among many blocks): x and x^2, x stored in T, in double.
template <typename T>
struct ValueAndSquare {
  const T* x;
  __device__ DoublePair operator()(int64_t i) const {
    const double v = Widen(x[i]);
    return {v, v * v};
  }
};

/// From the channel's sums of x and x^2 over m values: the mean and the
/// biased variance E[x^2] - mean^2, in double (the subtraction costs
/// log2(mean^2 / var) of double's 52 bits and the sums' own rounding a few
/// more, leaving more than FLOAT's 24 unless the mean lies some 2^11
/// standard deviations from 0; the CPU's two passes agree within FLOAT's
/// rounding), the running sums, inv_std =
/// 1 / sqrt(var + eps); channel 0 also updates the moving-average factor.
struct FinishStatistics {
  int64_t m;
  float fraction, correction, eps;
  float *mean, *inv_std, *mean_sum, *var_sum, *factor;
  __device__ void operator()(int64_t c, const DoublePair& total) const {
    const double count = static_cast<double>(m);
    const double mean_c = m > 0 ? total.a / count : 0.0;
    const float var =
        m > 0 ? static_cast<float>(fmax(total.b / count - mean_c * mean_c, 0.0)) : 0.0f;
    mean[c] = static_cast<float>(mean_c);
    // fraction 0 overwrites, as the CPU's Axpby: an old NaN does not survive.
    mean_sum[c] = fraction == 0.0f ? mean[c] : mean[c] + fraction * mean_sum[c];
    var_sum[c] = fraction == 0.0f ? correction * var : correction * var + fraction * var_sum[c];
    inv_std[c] = 1.0f / sqrtf(var + eps);
    if (c == 0) factor[0] = factor[0] * fraction + 1.0f;
  }
};

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
template <typename T>
__global__ void NormalizeKernel(int64_t n, const T* x, const float* mean, const float* inv_std,
                                BnShape s, T* y) {
  ElementwiseStore(n, y, [=](int64_t i) {
    const int64_t c = s.channel_of(i);
    return (Widen(x[i]) - mean[c]) * inv_std[c];
  });
}

/// dx = Gradient DiffFactor (global statistics); x_hat is read only with a
/// ReLU; in place allowed.
template <typename T>
__global__ void ScaleDiffKernel(int64_t n, const T* x_hat, const T* dy, BatchNormAffine affine,
                                const float* inv_std, BnShape s, T* dx) {
  ElementwiseStore(n, dx, [=](int64_t i) {
    const int64_t c = s.channel_of(i);
    const float g =
        affine.act.on ? affine.Gradient(c, Widen(x_hat[i]), Widen(dy[i])) : Widen(dy[i]);
    return g * affine.DiffFactor(inv_std, c);
  });
}

/// dx = DiffFactor (g - mean(g) - y mean(g y)), g = Gradient(dy), from the
/// channels' sums of g and g y (`sums`, over m values each), y being x_hat;
/// dx may alias dy.
template <typename T>
__global__ void BatchDiffKernel(int64_t n, const T* y, const T* dy, BatchNormAffine affine,
                                const float* inv_std, const DoublePair* sums, int64_t m, BnShape s,
                                T* dx) {
  ElementwiseStore(n, dx, [=](int64_t i) {
    const int64_t c = s.channel_of(i);
    const float mean_g = static_cast<float>(sums[c].a / static_cast<double>(m));
    const float mean_g_y = static_cast<float>(sums[c].b / static_cast<double>(m));
    const float x_hat = Widen(y[i]);
    const float g = affine.Gradient(c, x_hat, Widen(dy[i]));
    return affine.DiffFactor(inv_std, c) * (g - mean_g - x_hat * mean_g_y);
  });
}

/// The terms g and g x_hat of the sums with a ReLU absorbed, g = dy through
/// it (StoredGradientPair's without one).
template <typename T>
struct GatedGradientPair {
  const T* dy;
  const T* x_hat;
  BatchNormAffine affine;
  BnShape s;
  __device__ DoublePair operator()(int64_t i) const {
    const float x = Widen(x_hat[i]);
    const double g = affine.Gradient(s.channel_of(i), x, Widen(dy[i]));
    return {g, g * x};
  }
};

/// The affine part (and ReLU): y = affine.Forward(x_hat), from x_hat
/// stored in T; in place allowed.
template <typename T>
__global__ void ChannelAffineKernel(int64_t n, const T* x_hat, BatchNormAffine affine, BnShape s,
                                    T* y) {
  ElementwiseStore(n, y,
                   [=](int64_t i) { return affine.Forward(s.channel_of(i), Widen(x_hat[i])); });
}

/// The affine part in the pass that normalizes: x_hat = (x - mean[c])
/// inv_std[c] into `x_norm` (unless null), y = affine.Forward(x_hat) from
/// x_hat as stored (Backward recomputes the ReLU's signs from it); y may
/// alias x.
template <typename T>
__global__ void NormalizeAffineKernel(int64_t n, const T* x, const float* mean,
                                      const float* inv_std, BatchNormAffine affine, BnShape s,
                                      T* x_norm, T* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const int64_t c = s.channel_of(i);
    const T x_hat = Narrow<T>((Widen(x[i]) - mean[c]) * inv_std[c]);
    if (x_norm) x_norm[i] = x_hat;
    y[i] = Narrow<T>(affine.Forward(c, Widen(x_hat)));
  }
}

/// gamma's gradient += the sum of dy x_hat, beta's += the sum of dy, each
/// where not null (frozen params get none).
struct AccumulateAffineGradients {
  float* gamma_diff;
  float* beta_diff;
  __device__ void operator()(int64_t c, const DoublePair& total) const {
    if (gamma_diff) gamma_diff[c] += static_cast<float>(total.b);
    if (beta_diff) beta_diff[c] += static_cast<float>(total.a);
  }
};

}  // namespace

// launchers

BatchNormAffine BatchNormLayer::AffineOnGpu() const {
  if (!has_affine()) return {};
  return {gamma().gpu_data(), beta() ? beta()->gpu_data() : nullptr, relu_};
}

ChannelAxis BatchNormLayer::AxisOnGpu(const Blob& blob) const {
  return ChannelAxis::Of(num_, channels_, spatial_, blob.channels_last());
}

void BatchNormLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ChannelAxis axis = AxisOnGpu(*bottom[0]);
  const BnShape s{axis};
  const int64_t n = top[0]->count();
  const Type type = top[0]->storage_type();
  const BatchNormAffine affine = AffineOnGpu();
#ifdef USE_CUDNN
  if (CudnnForwardReady()) {
    // cuDNN writes x_hat: into the top, or into the copy first (in place, or
    // with the affine part), and y from that.
    const Blob* normalized = CudnnForward(*bottom[0], top[0]);
    if (n == 0) return;
    if (!has_affine()) {
      if (normalized != top[0]) {
        GpuConvert(n, type, normalized->data()->gpu_data(), type,
                   top[0]->data()->mutable_gpu_data());
      }
      return;
    }
    VisitStorageType(type, [&](auto tag) {
      using T = decltype(tag);
      Launch("ChannelAffineKernel", ElementwiseBlocks(n), ChannelAffineKernel<T>, n,
             GpuDataAs<T>(*normalized), affine, s, MutableGpuDataAs<T>(top[0]));
    });
    return;
  }
#endif
  float* mean = mean_.mutable_gpu_data();
  float* inv_std = inv_std_.mutable_gpu_data();
  if (use_global_stats_) {
    Launch("GlobalStatsKernel", CudaBlocks(channels_), GlobalStatsKernel, channels_,
           blobs_[0]->gpu_data(), blobs_[1]->gpu_data(), blobs_[2]->gpu_data(), eps_, mean,
           inv_std);
  } else {
    const int64_t m = num_ * spatial_;
    const float correction = m > 1 ? static_cast<float>(m) / static_cast<float>(m - 1) : 1.0f;
    // One pass over x in double for both sums (the CPU takes two: the
    // mean, then the squared deviations from it), so the statistics read the
    // blob once and the forward twice in all.
    VisitStorageType(type, [&](auto tag) {
      using T = decltype(tag);
      GpuChannelReduce<DoublePair>(
          axis.outer, axis.channels, axis.inner, ValueAndSquare<T>{GpuDataAs<T>(*bottom[0])},
          FinishStatistics{m, moving_average_fraction_, correction, eps_, mean, inv_std,
                           blobs_[0]->mutable_gpu_data(), blobs_[1]->mutable_gpu_data(),
                           blobs_[2]->mutable_gpu_data()});
    });
  }
  if (n == 0) return;
  const bool save_x_norm = keeps_x_norm() && runs_backward();
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    T* y = MutableGpuDataAs<T>(top[0]);
    if (has_affine()) {
      Launch("NormalizeAffineKernel", ElementwiseBlocks(n), NormalizeAffineKernel<T>, n,
             GpuDataAs<T>(*bottom[0]), mean, inv_std, affine, s,
             save_x_norm ? MutableGpuDataAs<T>(&x_norm_) : nullptr, y);
      return;
    }
    Launch("NormalizeKernel", ElementwiseBlocks(n), NormalizeKernel<T>, n, GpuDataAs<T>(*bottom[0]),
           mean, inv_std, s, y);
    if (save_x_norm) GpuConvert(n, type, y, type, x_norm_.data()->mutable_gpu_data());
  });
}

void BatchNormLayer::Backward_gpu(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  const bool gamma_grad = has_affine() && gamma_learns();
  const bool beta_grad = has_affine() && beta_learns();
  if (!propagate_down[0] && !gamma_grad && !beta_grad) return;
  const ChannelAxis axis = AxisOnGpu(*top[0]);
  const BnShape s{axis};
  const float* inv_std = inv_std_.gpu_data();
#ifdef USE_CUDNN
  // cuDNN reads y as its x: not where y is gone (its copy) or dx overwrites dy.
  if (CudnnForwardReady() && !keeps_x_norm()) {
    if (bottom[0]->count() > 0) CudnnBackward(*top[0], bottom[0]);
    return;
  }
#endif
  const bool sums_needed = (propagate_down[0] && !use_global_stats_) || gamma_grad || beta_grad;
  const BatchNormAffine affine = AffineOnGpu();
  VisitStorageType(top[0]->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* dy = GpuDiffAs<T>(*top[0]);
    // The sums of g and g x_hat in one pass (g: dy through the absorbed
    // ReLU, or dy), taken before dx overwrites dy (in place): the stream
    // orders them. They go to gamma's and beta's gradients on the device. y
    // is x_hat: the top's data or its copy (kept, with a ReLU).
    const bool relu = affine.act.on;
    const T* y = nullptr;
    if (sums_needed || relu) y = GpuDataAs<T>(keeps_x_norm() ? x_norm_ : *top[0]);
    const DoublePair* sums = nullptr;
    const AccumulateAffineGradients to_params{
        gamma_grad ? affine_.owner->blobs()[affine_.gamma]->mutable_gpu_diff() : nullptr,
        beta_grad ? beta()->mutable_gpu_diff() : nullptr};
    if (sums_needed && relu) {
      sums = GpuChannelReduce<DoublePair>(axis.outer, axis.channels, axis.inner,
                                          GatedGradientPair<T>{dy, y, affine, s}, to_params);
    } else if (sums_needed) {
      sums = GpuChannelReduce<DoublePair>(axis.outer, axis.channels, axis.inner,
                                          StoredGradientPair<T>{dy, y}, to_params);
    }
    const int64_t n = bottom[0]->count();
    if (!propagate_down[0] || n == 0) return;
    T* dx = MutableGpuDiffAs<T>(bottom[0]);  // may be dy (in place)
    if (use_global_stats_) {
      Launch("ScaleDiffKernel", ElementwiseBlocks(n), ScaleDiffKernel<T>, n, y, dy, affine, inv_std,
             s, dx);
      return;
    }
    Launch("BatchDiffKernel", ElementwiseBlocks(n), BatchDiffKernel<T>, n, y, dy, affine, inv_std,
           sums, num_ * spatial_, s, dx);
  });
}

}  // namespace demi
