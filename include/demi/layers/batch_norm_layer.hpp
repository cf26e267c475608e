#ifndef DEMI_LAYERS_BATCH_NORM_LAYER_HPP_
#define DEMI_LAYERS_BATCH_NORM_LAYER_HPP_

#include <array>
#include <memory>

#include "demi/layer.hpp"
#include "demi/layers/relu_layer.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/fast_divider.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// A BatchNorm's affine part and activation as the CUDA kernels take them,
/// per channel c: y = act(gamma[c] x_hat + beta[c]); gamma null: neither (y
/// = x_hat), beta null: no bias. (The CPU loops spell the same formulas out
/// with the ReLU's presence a compile-time constant, which they need to
/// vectorize.)
struct BatchNormAffine {
  const float* gamma = nullptr;
  const float* beta = nullptr;
  AbsorbedReLU act;
  DEMI_HOST_DEVICE float Forward(int64_t c, float x_hat) const {
    return act.Forward(Pre(c, x_hat));
  }
  /// dy through the ReLU (if any): the gradient the affine part receives.
  DEMI_HOST_DEVICE float Gradient(int64_t c, float x_hat, float dy) const {
    return act.Backward(Pre(c, x_hat), dy);
  }
  /// Gradient() where gamma, beta and the ReLU are all there, without the
  /// branches on them (the CPU's gated loops vectorize only so).
  DEMI_HOST_DEVICE float ReLUGradient(int64_t c, float x_hat, float dy) const {
    return ReLUBackward{act.slope}(gamma[c] * x_hat + beta[c], dy);
  }
  /// The per-channel factor of dx (d x_hat = gamma g): gamma[c] inv_std[c],
  /// or inv_std[c].
  DEMI_HOST_DEVICE float DiffFactor(const float* inv_std, int64_t c) const {
    return gamma ? gamma[c] * inv_std[c] : inv_std[c];
  }

 private:
  DEMI_HOST_DEVICE float Pre(int64_t c, float x_hat) const {
    if (!gamma) return x_hat;
    const float v = gamma[c] * x_hat;
    return beta ? v + beta[c] : v;
  }
};

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
/// The affine part fused (scale_bias, or a Scale absorbed by the net's
/// fuse_layers: see Absorb): Forward writes y = gamma x_hat + beta in the
/// pass that normalizes, keeping x_hat (saved for backward; the top's data
/// is not read). Backward takes the sums of dy and dy x_hat in one pass, which
/// give gamma's gradient (sum dy x_hat), beta's (sum dy) and, with
/// d x_hat = gamma dy, the gradient below in one more pass:
///   dx = gamma inv_std (dy - mean(dy) - x_hat mean(dy x_hat)).
/// A BatchNorm + Scale pair in place reads and writes its blob in 3 passes
/// forward and 2 backward this way, against 6 and 5 apart. On the CPU, the
/// batch statistics of a 16-bit blob take one of those passes: each image's
/// moments while its rows are in the core's cache, merged
/// (batch_norm_image_moments.hpp); a FLOAT blob's take two, the mean's and
/// then the variance's, in double as Caffe's.
///
/// With the affine part it may also absorb the in-place ReLU after it: y =
/// relu(gamma x_hat + beta), and Backward takes dy through the ReLU first,
/// at gamma x_hat + beta recomputed from the kept x_hat (so a later layer may
/// overwrite y). Forward computes y from x_hat as stored (rounded to a
/// 16-bit type), so both passes see the same signs. A BatchNorm + Scale +
/// ReLU triple then takes 3 passes forward, against 7 apart, and 2 backward,
/// against 6 (on the CPU 3 in Caffe's layout, whose sums' loops vectorize
/// only without the ReLU: it first writes dy through the ReLU into the top's
/// diff, as the ReLU apart does).
///
/// Backward: with batch statistics
///   dx = (dy - mean(dy) - y mean(dy y)) / sqrt(var + eps),
/// means over the channel's m values; with global statistics
///   dx = dy / sqrt(var + eps).
/// The per-channel 1 / sqrt(var + eps) is kept (saved for backward). With
/// batch statistics Backward reads the top's data (y) and not the bottom's;
/// in place, or where a later in-place layer overwrites y, Forward keeps a
/// copy of y (saved for backward, and offered to a following in-place Scale
/// as its saved input) and Backward reads that. With global statistics it
/// reads no data. The per-channel mean is scratch.
///
/// GPU: CUDA kernels (batch_norm_layer.cu; the batch statistics in one
/// GpuChannelReduce pass summing x and x^2 in double, each channel cut among
/// many blocks; blobs in Caffe's layout or channels last), and in builds with
/// USE_CUDNN cuDNN's spatial batch normalization for batch statistics over m
/// values (m > 1) in Caffe's layout when the engine decision says CUDNN.
/// cuDNN's forward runs with an averaging factor of 1 into scratch, and the
/// running sums are then updated as above; in place (or with the affine part)
/// it writes the copy of x_hat first, and y from that. Its backward runs with
/// y in place of x, a mean of 0, an inverse standard deviation of 1 and
/// 1/sqrt(var + eps) as the scale, which is the formula above; in place (dx
/// aliasing dy) the CUDA kernels run instead. Global statistics always run
/// the CUDA kernels. cuDNN needs a scratch buffer of 4 C floats.
class BatchNormLayer : public Layer {
 public:
  explicit BatchNormLayer(const LayerParameter& param);
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "BatchNorm"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  /// Only with batch statistics where it keeps no copy of x_hat (not in
  /// place, not overwritten later, no affine part): then it reads y.
  bool BackwardReadsTopData(int) const override { return !use_global_stats_ && !keeps_x_norm(); }
  /// A later in-place layer (a Scale, a ReLU) overwrites y: keep a copy, as
  /// in place (Caffe keeps one always).
  bool TopOverwrittenLater() override;
  /// The copy of y, offered to a following in-place Scale (x_hat is not y
  /// with the affine part).
  Blob* SavedOutputCopy() override { return keeps_x_norm() && !has_affine() ? &x_norm_ : nullptr; }
  /// Takes a Scale reading its top in place with one learned scale per
  /// channel (and a bias or none), without scale_bias of its own: the pair
  /// then runs as one layer with the Scale's params as gamma and beta. With
  /// the affine part (its own or a Scale's), then takes a ReLU reading the
  /// top in place with a non-negative slope.
  bool Absorb(Layer* next) override;
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
  /// The CUDA kernels read channels last too (cuDNN's calls then run not),
  /// as do the CPU loops.
  BlobFormats channels_last_layouts() const override {
    return context_.device == Device::kGPU ? BlobFormats::kUniform : blocked_layouts();
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
  std::array<Blob, 3> replay_running_;  ///< the running sums kept across a Replay
#ifdef USE_CUDNN
  /// The cuDNN path (batch_norm_layer_cudnn.cpp).
  struct CudnnState;
  void CudnnSetUp();
  void CudnnReshape(const Blob& bottom);
  /// Whether Forward runs cuDNN: batch statistics over more than one value
  /// and, in place, a copy of x_hat to write.
  bool CudnnForwardReady() const;
  /// Writes x_hat and the running sums; returns where x_hat went (the top, or
  /// x_norm_ for the caller to write the top from).
  const Blob* CudnnForward(const Blob& bottom, Blob* top);
  void CudnnBackward(const Blob& top, Blob* bottom);
  /// Null without cuDNN; shared_ptr leaves CudnnState incomplete here.
  std::shared_ptr<CudnnState> cudnn_;
#endif

  /// The learned affine part y = gamma x_hat + beta, per channel: blobs 3
  /// and 4 with scale_bias, or an absorbed Scale's scale and bias (its own
  /// param specs decide whether they learn). beta is optional.
  struct Affine {
    Layer* owner = nullptr;
    int gamma = -1, beta = -1;  ///< indices in owner->blobs(); beta -1: none
  };
  bool has_affine() const { return affine_.owner != nullptr; }
  const Blob& gamma() const { return *affine_.owner->blobs()[affine_.gamma]; }
  /// beta's blob, or null without one.
  Blob* beta() const {
    return affine_.beta >= 0 ? affine_.owner->blobs()[affine_.beta].get() : nullptr;
  }
  bool gamma_learns() const { return affine_.owner->param_propagate_down(affine_.gamma); }
  bool beta_learns() const {
    return affine_.beta >= 0 && affine_.owner->param_propagate_down(affine_.beta);
  }
#ifndef CPU_ONLY
  /// gamma, beta and the activation for the CUDA kernels.
  BatchNormAffine AffineOnGpu() const;
  /// Where the channels of `blob` (a bottom or top) lie for them.
  ChannelAxis AxisOnGpu(const Blob& blob) const;
#endif
  /// Whether Backward needs a copy of x_hat: with the affine part (for
  /// gamma's gradient), or with batch statistics where y does not survive
  /// until Backward (in place, or a later layer overwrites it).
  bool keeps_x_norm() const {
    return has_affine() || ((in_place_ || top_overwritten_) && !use_global_stats_);
  }
  /// Registers x_norm_ with the planner once keeps_x_norm() holds.
  void RegisterXNorm();
  /// Forward_cpu and Backward_cpu over blobs stored as T (float, bfloat16).
  template <typename T>
  void ForwardStored(const Blob& bottom, Blob* top);
  template <typename T>
  void BackwardStored(Blob* top, bool propagate_down, Blob* bottom);
  /// The batch's mean and biased variance of `bottom`, stored as T.
  template <typename T>
  void BatchMoments(const Blob& bottom, float* mean, float* var);
  bool WantsBlockedLayouts() const;
  /// The batch's mean[c] and biased var[c] of x in Caffe's layout.
  void Moments(const float* x, float* mean, float* var) const;
  /// `blob` (bottom or top) as N x C x spatial in its layout.
  ChannelBlocks Channels(const Blob& blob) const;

  const bool scale_bias_;
  Affine affine_;
  AbsorbedReLU relu_;  ///< an absorbed ReLU, or none
  bool x_norm_registered_ = false;
  bool use_global_stats_ = false;
  float moving_average_fraction_ = 0.999f;
  float eps_ = 1e-5f;
  bool in_place_ = false;
  bool top_overwritten_ = false;  ///< a later layer writes the top in place
  int64_t channels_ = 0;
  int64_t num_ = 0;                  ///< N
  int64_t spatial_ = 0;              ///< product of the axes after C
  Blob mean_;                        ///< C, scratch
  Blob inv_std_;                     ///< C: 1 / sqrt(var + eps), saved for backward
  Blob x_norm_;                      ///< copy of x_hat (keeps_x_norm() only), saved for backward
  std::vector<double> sums_;         ///< 2 C: per-channel sums, scratch
  std::vector<float> means_dy_y_;    ///< C: scratch of Backward
  std::vector<float> coefficients_;  ///< C: scratch of Backward (gamma inv_std)
  std::vector<float> zeros_;         ///< C zeros: beta of an affine part without one
};

}  // namespace demi

#endif  // DEMI_LAYERS_BATCH_NORM_LAYER_HPP_
