// The cuDNN path of BatchNorm with batch statistics (see batch_norm_layer.hpp).
#include "demi/layers/batch_norm_layer.hpp"

#ifdef USE_CUDNN

#include "demi/util/convert_gpu.hpp"
#include "demi/util/cudnn.hpp"
#include "demi/util/math_gpu.hpp"

namespace demi {

struct BatchNormLayer::CudnnState {
  CudnnTensor data;   ///< N x C x spatial x 1, for x, y and their gradients, in their type
  CudnnTensor stats;  ///< 1 x C x 1 x 1, FLOAT whatever the data's type
  /// Scratch, 4 C floats: ones, zeros, then two outputs cuDNN needs
  /// (forward: the unbiased batch variance and the saved mean; backward: the
  /// scale and bias gradients, which are dropped).
  Blob scratch;
  /// x's and y's type. cuDNN's batch normalization takes FLOAT and FLOAT16
  /// data (with FLOAT statistics); BFLOAT16 runs the CUDA kernels, as do
  /// blobs stored channels last.
  Type type = FLOAT;
  bool channels_last = false;
};

void BatchNormLayer::CudnnSetUp() {
  if (engine_.engine != EngineKind::kCudnn) return;
  cudnn_ = std::make_shared<CudnnState>();
  cudnn_->stats.Set({1, channels_, 1, 1});
  RegisterBuffer("cudnn_scratch", &cudnn_->scratch, BufferLifetime::kScratch);
}

void BatchNormLayer::CudnnReshape(const Blob& bottom) {
  // cuDNN takes no empty tensors; the CUDA kernels handle those.
  cudnn_->type = bottom.storage_type();
  cudnn_->channels_last = bottom.channels_last();
  if (bottom.count() > 0) {
    cudnn_->data.Set({num_, channels_, spatial_, 1}, bottom.storage_type());
  }
  cudnn_->scratch.Reshape(std::vector<int64_t>{4 * channels_});
}

bool BatchNormLayer::CudnnForwardReady() const {
  return cudnn_ && cudnn_->type != BFLOAT16 && !cudnn_->channels_last && !use_global_stats_ &&
         num_ * spatial_ > 1 && channels_ > 0 && (!in_place_ || runs_backward());
}

const Blob* BatchNormLayer::CudnnForward(const Blob& bottom, Blob* top) {
  CudnnState& s = *cudnn_;
  const int64_t c = channels_;
  float* ones = s.scratch.mutable_gpu_data();
  float* zeros = ones + c;
  float* unbiased_var = ones + 2 * c;
  float* saved_mean = ones + 3 * c;
  GpuSet(c, 1.0f, ones);
  GpuSet(3 * c, 0.0f, zeros);  // also the running outputs: factor 1 leaves 0 * them
  float* mean = mean_.mutable_gpu_data();
  GpuSet(c, 0.0f, mean);
  // x_hat goes to the copy where there is one (in place, cuDNN would read x
  // while it writes), else to the top. x, x_hat and the copy are stored in
  // the blobs' type; the statistics in FLOAT.
  Blob* normalized = keeps_x_norm() && runs_backward() ? &x_norm_ : top;
  void* y = normalized->data()->mutable_gpu_data();
  // Factor 1: the "running" outputs receive this batch's mean and unbiased
  // variance; the saved inverse deviation is 1 / sqrt(biased var + eps).
  DEMI_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
      CudnnHandle(), CUDNN_BATCHNORM_SPATIAL, CudnnScale::One(), CudnnScale::Zero(), s.data.get(),
      bottom.data()->gpu_data(), s.data.get(), y, s.stats.get(), ones, zeros, 1.0, mean,
      unbiased_var, eps_, saved_mean, inv_std_.mutable_gpu_data()));
  // The running sums, as on the CPU (the variance is already unbiased).
  const float f = moving_average_fraction_;
  float* factor = blobs_[2]->mutable_gpu_data();
  GpuScal(1, f, factor);
  GpuAddScalar(1, 1.0f, factor);
  GpuAxpby(c, 1.0f, mean, f, blobs_[0]->mutable_gpu_data());
  GpuAxpby(c, 1.0f, unbiased_var, f, blobs_[1]->mutable_gpu_data());
  return normalized;
}

void BatchNormLayer::CudnnBackward(const Blob& top, Blob* bottom) {
  CudnnState& s = *cudnn_;
  const int64_t c = channels_;
  float* ones = s.scratch.mutable_gpu_data();
  float* zeros = ones + c;
  GpuSet(c, 1.0f, ones);
  GpuSet(c, 0.0f, zeros);
  // With x := y, saved mean 0 and saved inverse deviation 1, cuDNN's x-hat is
  // y, and scale := inv_std gives dx = inv_std (dy - mean(dy) - y mean(dy y)).
  DEMI_CUDNN_CHECK(cudnnBatchNormalizationBackward(
      CudnnHandle(), CUDNN_BATCHNORM_SPATIAL, CudnnScale::One(), CudnnScale::Zero(),
      CudnnScale::One(), CudnnScale::Zero(), s.data.get(), top.data()->gpu_data(), s.data.get(),
      top.diff()->gpu_data(), s.data.get(), bottom->diff()->mutable_gpu_data(), s.stats.get(),
      inv_std_.gpu_data(), ones + 2 * c, ones + 3 * c, eps_, zeros, ones));
}

}  // namespace demi

#endif  // USE_CUDNN
