#ifndef DEMI_LAYERS_BATCH_NORM_LAYER_HPP_
#define DEMI_LAYERS_BATCH_NORM_LAYER_HPP_

#include <memory>

#include "demi/layer.hpp"
#include "demi/util/channel_blocks.hpp"

namespace demi {

/// @brief Batch normalization, as in Caffe without the affine part (a Scale
/// layer follows it): per channel c,
///   y = (x - mean_c) / sqrt(var_c + eps);
/// with NVCaffe's scale_bias (or a scale_filler or bias_filler), its own
/// learned affine part: y = gamma_c x_hat + beta_c, x_hat the above.
///
/// Bottom: N x C or N x C x H x W (any N x C x ... blob; the statistics run
/// over N and every axis after C, m = N * H * W values a channel). Top: the
/// same shape; in place allowed.
///
/// With batch statistics (use_global_stats false, the default in TRAIN),
/// mean and var are the batch's (var biased, over m), and Forward updates
/// the running sums, Caffe's three param blobs: with f =
/// moving_average_fraction,
///   blobs[2] (shape {1}) = f blobs[2] + 1,
///   blobs[0] (C)         = f blobs[0] + mean,
///   blobs[1] (C)         = f blobs[1] + var * m / (m - 1)  (unbiased; m = 1: var).
/// With global statistics (the default in TEST), mean = blobs[0] / blobs[2]
/// and var = blobs[1] / blobs[2] (0 when blobs[2] is 0), and nothing updates.
/// The blobs are statistics, not learned: the layer sets lr_mult and
/// decay_mult of its three param specs to 0. scale_bias adds blobs[3]
/// (gamma, C, scale_filler or 1) and blobs[4] (beta, C, bias_filler or 0),
/// learned (ParamSpec's defaults unless given: NVCaffe's lr and decay 1).
///
/// scale_bias backward: dgamma_c += sum(dy x_hat), dbeta_c += sum(dy), and
/// the gradient above runs with dy := gamma dy (written over the top's
/// diff, which only this layer reads) and y := x_hat. x_hat is kept
/// (saved for backward), the top's data is not read: the bytes of a
/// BatchNorm + Scale pair, where Scale keeps x_hat for its own gradient.
///
/// Backward: with batch statistics
///   dx = (dy - mean(dy) - y mean(dy y)) / sqrt(var + eps),
/// means over the channel's m values; with global statistics
///   dx = dy / sqrt(var + eps).
/// The per-channel 1 / sqrt(var + eps) is kept (saved for backward). With
/// batch statistics Backward reads the top's data (y) and not the bottom's;
/// in place, where a later in-place layer may overwrite y, Forward keeps a
/// copy of y (saved for backward, and offered to a following in-place Scale
/// as its saved input) and Backward reads that. With global statistics it
/// reads no data. The per-channel mean is scratch.
///
/// GPU: CUDA kernels (batch_norm_layer.cu), and in builds with USE_CUDNN
/// cuDNN's spatial batch normalization for batch statistics over m > 1
/// values when the engine decision says CUDNN (not with scale_bias yet). cuDNN's
/// forward runs with an averaging factor of 1 into scratch, and the running
/// sums are then updated as above; in place it writes the copy of y first.
/// Its backward runs with y in place of x, a mean of 0, an inverse standard
/// deviation of 1 and 1 / sqrt(var + eps) as the scale, which is the
/// formula above; in place (dx aliasing dy) the CUDA kernels run instead.
/// Global statistics always run the CUDA kernels. cuDNN needs a scratch
/// buffer of 4 C floats.
class BatchNormLayer : public Layer {
 public:
  explicit BatchNormLayer(const LayerParameter& param);
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "BatchNorm"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  /// Only with batch statistics, and not in place or with scale_bias (where
  /// it reads its copy of x_hat).
  bool BackwardReadsTopData(int) const override {
    return !use_global_stats_ && !in_place_ && !scale_bias_;
  }
  /// The copy of y, offered to a following in-place Scale (x_hat is not y
  /// with scale_bias).
  Blob* SavedOutputCopy() override { return keeps_x_norm() && !scale_bias_ ? &x_norm_ : nullptr; }
  bool CanReplay() const override { return true; }
  /// Forward again, leaving the running statistics as they were.
  void Replay(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  /// Its loops read and write channel-blocked blobs on the CPU.
  BlobFormats blocked_layouts() const override {
    return WantsBlockedLayouts() ? BlobFormats::kUniform : BlobFormats::kNone;
  }
  /// The same loops over 16-bit blobs (x_hat saved in their type too), in
  /// FLOAT; on a GPU, the CUDA kernels and cuDNN's calls, in FLOAT too.
  BlobFormats narrow_blobs() const override {
    return NarrowBlobsWhen(WantsBlockedLayouts() || context_.device == Device::kGPU,
                           BlobFormats::kUniform);
  }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#endif

 private:
  std::vector<std::vector<float>> replay_running_;  ///< running sums kept across a Replay
#ifdef USE_CUDNN
  /// The cuDNN path (batch_norm_layer_cudnn.cpp).
  struct CudnnState;
  void CudnnSetUp();
  void CudnnReshape(const Blob& bottom);
  /// Whether Forward runs cuDNN: batch statistics over more than one value
  /// and, in place, a copy of y to write.
  bool CudnnForwardReady() const;
  void CudnnForward(const Blob& bottom, Blob* top);
  void CudnnBackward(const Blob& top, Blob* bottom);
  /// Null without cuDNN; shared_ptr leaves CudnnState incomplete here.
  std::shared_ptr<CudnnState> cudnn_;
#endif

  /// Whether Backward needs a copy of x_hat: with scale_bias (for gamma's
  /// gradient), or in place with batch statistics.
  bool keeps_x_norm() const { return scale_bias_ || (in_place_ && !use_global_stats_); }
  /// scale_bias: gamma's and beta's gradients from dy and x_hat, then dy :=
  /// gamma dy when the bottom's gradient is wanted.
  template <typename T>
  void AffineBackward_cpu(Blob* top, bool propagate_down);
  /// Forward_cpu and Backward_cpu over blobs stored as T (float, bfloat16).
  template <typename T>
  void ForwardStored(const Blob& bottom, Blob* top);
  template <typename T>
  void BackwardStored(Blob* top, bool propagate_down, Blob* bottom);
  /// The batch's mean and biased variance of `bottom`, stored as T.
  template <typename T>
  void BatchMoments(const Blob& bottom, float* mean, float* var);
#ifndef CPU_ONLY
  void AffineForward_gpu(Blob* top);
  void AffineBackward_gpu(Blob* top, bool propagate_down);
#endif
  bool WantsBlockedLayouts() const;
  /// The batch's mean[c] and biased var[c] of x in Caffe's layout.
  void Moments(const float* x, float* mean, float* var) const;
  /// `blob` (bottom or top) as N x C x spatial in its layout.
  ChannelBlocks Channels(const Blob& blob) const;

  const bool scale_bias_;
  bool use_global_stats_ = false;
  float moving_average_fraction_ = 0.999f;
  float eps_ = 1e-5f;
  bool in_place_ = false;
  int64_t channels_ = 0;
  int64_t num_ = 0;                ///< N
  int64_t spatial_ = 0;            ///< product of the axes after C
  Blob mean_;                      ///< C, scratch
  Blob inv_std_;                   ///< C: 1 / sqrt(var + eps), saved for backward
  Blob x_norm_;                    ///< copy of x_hat (keeps_x_norm() only), saved for backward
  std::vector<double> sums_;       ///< 2 C: per-channel sums, scratch
  std::vector<float> means_dy_y_;  ///< C: scratch of Backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_BATCH_NORM_LAYER_HPP_
