#ifndef DEMI_LAYERS_BATCH_NORM_LAYER_HPP_
#define DEMI_LAYERS_BATCH_NORM_LAYER_HPP_

#include <memory>

#include "demi/layer.hpp"
#include "demi/util/channel_blocks.hpp"

namespace demi {

/// @brief Batch normalization without the affine part (a Scale layer follows
/// it), as in Caffe: per channel c,
///   y = (x - mean_c) / sqrt(var_c + eps).
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
/// decay_mult of its three param specs to 0.
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
/// values (BatchNormParameter has no engine field, as in Caffe). cuDNN's
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
  /// Only with batch statistics, and not in place (where it reads its copy).
  bool BackwardReadsTopData(int) const override { return !use_global_stats_ && !in_place_; }
  Blob* SavedOutputCopy() override { return keeps_x_norm() ? &x_norm_ : nullptr; }
  bool CanReplay() const override { return true; }
  /// Forward again, leaving the running statistics as they were.
  void Replay(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  /// Its loops read and write channel-blocked blobs on the CPU.
  BlockedLayouts blocked_layouts() const override {
    return WantsBlockedLayouts() ? BlockedLayouts::kUniform : BlockedLayouts::kNone;
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

  /// Whether Backward needs the copy of y: in place with batch statistics.
  bool keeps_x_norm() const { return in_place_ && !use_global_stats_; }
  bool WantsBlockedLayouts() const;
  /// The batch's mean[c] and biased var[c] of x in Caffe's layout.
  void Moments(const float* x, float* mean, float* var) const;
  /// `blob` (bottom or top) as N x C x spatial in its layout.
  ChannelBlocks Channels(const Blob& blob) const;

  bool use_global_stats_ = false;
  float moving_average_fraction_ = 0.999f;
  float eps_ = 1e-5f;
  bool in_place_ = false;
  int64_t channels_ = 0;
  int64_t num_ = 0;      ///< N
  int64_t spatial_ = 0;  ///< product of the axes after C
  Blob mean_;            ///< C, scratch
  Blob inv_std_;         ///< C: 1 / sqrt(var + eps), saved for backward
  Blob x_norm_;          ///< copy of y, in place with batch statistics only; saved for backward
  std::vector<double> sums_;       ///< 2 C: per-channel sums, scratch
  std::vector<float> means_dy_y_;  ///< C: scratch of Backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_BATCH_NORM_LAYER_HPP_
