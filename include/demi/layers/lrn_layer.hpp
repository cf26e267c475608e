#ifndef DEMI_LAYERS_LRN_LAYER_HPP_
#define DEMI_LAYERS_LRN_LAYER_HPP_

#include <memory>

#include "demi/layer.hpp"

namespace demi {

/// @brief Local response normalization, as in Caffe: y = x * scale^-beta.
///
/// With n = local_size (odd) and a window centred on each element:
/// - ACROSS_CHANNELS: scale = k + alpha / n * sum of x^2 over the n
///   neighbouring channels at the same (h, w), channels past the ends
///   counting as zero;
/// - WITHIN_CHANNEL: scale = 1 + alpha / n^2 * sum of x^2 over the n x n
///   spatial window in the same channel, zero padded. As in Caffe the
///   constant is 1 here, and `k` is ignored.
///
/// Bottom and top: N x C x H x W (not in place). scale is saved for
/// backward, which is analytic:
///   dx_i = dy_i scale_i^-beta
///          - 2 beta alpha' x_i * sum over j whose window holds i of
///            dy_j x_j scale_j^(-beta - 1),
/// with alpha' = alpha / n (across) or alpha / n^2 (within). Backward reads
/// the bottom data and not the top; the CPU's per-image ratio buffer is
/// scratch (the GPU's kernel computes each ratio where it sums it).
///
/// Engines (lrn_param.engine, as in Caffe): CAFFE, or CUDNN (DEFAULT in
/// builds with USE_CUDNN) for a GPU layer with ACROSS_CHANNELS and settings
/// cuDNN takes (local_size <= 16, k >= 1e-5, beta >= 0.01); WITHIN_CHANNEL
/// always runs the CAFFE kernels. cuDNN keeps no scale buffer and its
/// backward reads the top data as well as the bottom's.
///
/// On the CPU, DNNL (and DEFAULT, unless the net's engine says CAFFE) runs
/// ACROSS_CHANNELS through oneDNN in its blocked layout (the CPU's channel
/// block inner, reordered through scratch buffers where a blob holds
/// another), its workspace scratch that backward recomputes instead of the
/// scale; between channels-last blobs of one type where OwnKernelsTake(),
/// our own kernels (channels_last_lrn.hpp), which keep nothing: backward
/// recomputes the scales from the bottom. WITHIN_CHANNEL runs the CAFFE
/// engine.
class LRNLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "LRN"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return true; }
  bool BackwardReadsTopData(int) const override { return RunsCudnn(); }
  EngineKind running_engine() const override { return RunningWithDnnl(DnnlReady()); }
  BlobFormats blocked_layouts() const override {
    return DnnlReady() ? BlobFormats::kPerBlob : BlobFormats::kNone;
  }
  /// oneDNN's LRN runs in FLOAT on blocked floats; BFLOAT16 blobs are
  /// converted by the reorders into and out of them (our channels-last
  /// kernels read and write them as stored). On a GPU the CUDA kernels (not
  /// cuDNN's) read and write 16-bit blobs, in FLOAT.
  BlobFormats narrow_blobs() const override {
    if (context_.device == Device::kGPU) {
      return NarrowBlobsWhen(!RunsCudnn(), BlobFormats::kUniform);
    }
    return NarrowBlobsWhen(DnnlReady(), BlobFormats::kPerBlob);
  }
  /// On the CPU, channels last where oneDNN's convolutions want it and
  /// OwnKernelsTake() (lrn_layer_dnnl.cpp).
  BlobFormats channels_last_layouts() const override;
  /// Whether the DNNL engine runs our channels-last kernels at the current
  /// shapes and layouts (lrn_layer_dnnl.cpp).
  bool RunsChannelsLastKernels() const;

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
#ifdef USE_CUDNN
  /// The cuDNN engine (lrn_layer_cudnn.cpp).
  struct CudnnState;
  void CudnnSetUp();
  void CudnnReshape(const Blob& bottom);
  void CudnnForward(const Blob& bottom, Blob* top);
  void CudnnBackward(const Blob& top, Blob* bottom);
  /// Null for the CAFFE engine; shared_ptr leaves CudnnState incomplete here.
  std::shared_ptr<CudnnState> cudnn_;
#endif

  /// The DNNL engine (lrn_layer_dnnl.cpp).
  struct DnnlState;
  void DnnlSetUp();
  void DnnlReshape(const Blob& bottom, const Blob& top);
  bool DnnlReady() const;
  /// Whether our channels-last kernels take this layer's settings and
  /// channels (beta 0.75, local_size and channels within their limits).
  bool OwnKernelsTake() const;
  void DnnlForward(const Blob& bottom, Blob* top);
  void DnnlBackward(const Blob& top, Blob* bottom);
  std::shared_ptr<DnnlState> dnnl_;  ///< null for other engines

  /// Sum of `image` (one C x H x W image) over the window centred on (c, h, w).
  double WindowSum(const float* image, int64_t c, int64_t h, int64_t w) const;

  bool across_ = true;
  int64_t half_ = 0;        ///< (local_size - 1) / 2
  float alpha_over_n_ = 0;  ///< alpha / n (across) or alpha / n^2 (within)
  float beta_ = 0;
  float shift_ = 1;  ///< k (across) or 1 (within)
  int64_t num_ = 0, channels_ = 0, height_ = 0, width_ = 0;
  Blob scale_;  ///< saved for backward, shaped like the bottom
  Blob ratio_;  ///< scratch, one C x H x W image (the CPU's; empty on a GPU)
};

}  // namespace demi

#endif  // DEMI_LAYERS_LRN_LAYER_HPP_
