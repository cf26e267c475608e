#include "demi/layers/contrastive_loss_layer.hpp"
#include "demi/layers/loss_kernels.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// One thread per pair n: its loss term (summed afterwards in a fixed order,
/// not with atomics) and its gradient coefficient, as the CPU computes them.
__global__ void ContrastivePairKernel(int64_t num, int64_t dim, float margin, bool legacy,
                                      const float* diff, const float* similar, float* pair_loss,
                                      float* coeff) {
  for (int64_t n = GridStart(); n < num; n += GridStride()) {
    const float* d = diff + n * dim;
    double dist_sq = 0;
    for (int64_t k = 0; k < dim; ++k) dist_sq += static_cast<double>(d[k]) * d[k];
    double loss = 0;
    if (static_cast<int64_t>(similar[n]) != 0) {
      loss = dist_sq;
      coeff[n] = 1.0f;
    } else if (legacy) {
      const double inside = margin - dist_sq;
      loss = inside > 0 ? inside : 0.0;
      coeff[n] = inside > 0 ? -1.0f : 0.0f;
    } else {
      const double dist = sqrt(dist_sq);
      const double inside = margin - dist;
      loss = inside > 0 ? inside * inside : 0.0;
      coeff[n] = inside > 0 ? static_cast<float>(-inside / (dist + 1e-4)) : 0.0f;
    }
    pair_loss[n] = static_cast<float>(loss);
  }
}

/// A pair's loss term, in double.
struct PairLossTerm {
  const float* pair_loss;
  __device__ double operator()(int64_t n) const { return pair_loss[n]; }
};

/// dx[n, k] = (alpha * coeff[n]) * diff[n, k], alpha = sign * *weight /
/// samples: the top's diff read on the device.
__global__ void ContrastiveBackwardKernel(int64_t n, int64_t dim, float sign, const float* weight,
                                          float samples, const float* coeff, const float* diff,
                                          float* dx) {
  const float alpha = sign * *weight / samples;
  for (int64_t k = GridStart(); k < n; k += GridStride()) {
    const float c = alpha * coeff[k / dim];
    dx[k] = c * diff[k];
  }
}

}  // namespace

// launchers

void ContrastiveLossLayer::Forward_gpu(const std::vector<Blob*>& bottom,
                                       const std::vector<Blob*>& top) {
  const ContrastiveLossParameter& param = layer_param_.contrastive_loss_param();
  float* diff = diff_.mutable_gpu_data();
  GpuSub(bottom[0]->count(), bottom[0]->gpu_data(), bottom[1]->gpu_data(), diff);
  if (num_ > 0) {
    pair_loss_.Reshape(std::vector<int64_t>{num_});
    Launch("ContrastivePairKernel", CudaBlocks(num_), ContrastivePairKernel, num_, dim_,
           param.margin(), param.legacy_version(), diff, bottom[2]->gpu_data(),
           pair_loss_.mutable_gpu_data(), coeff_.mutable_gpu_data());
  }
  // The loss stays on the device (read at a display or test).
  GpuChannelReduce<double>(
      1, 1, num_, PairLossTerm{num_ > 0 ? pair_loss_.gpu_data() : nullptr},
      FinishHalfMean{static_cast<double>(SampleDivisor()), top[0]->mutable_gpu_data()});
}

void ContrastiveLossLayer::Backward_gpu(const std::vector<Blob*>& top,
                                        const std::vector<bool>& propagate_down,
                                        const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 2, "similarity labels");
  const int64_t count = num_ * dim_;
  if (count == 0) return;
  for (int b = 0; b < 2; ++b) {
    if (!propagate_down[b]) continue;
    Launch("ContrastiveBackwardKernel", CudaBlocks(count), ContrastiveBackwardKernel, count, dim_,
           b == 0 ? 1.0f : -1.0f, top[0]->gpu_diff(), static_cast<float>(SampleDivisor()),
           coeff_.gpu_data(), diff_.gpu_data(), bottom[b]->mutable_gpu_diff());
  }
}

}  // namespace demi
