#ifndef DEMI_LAYERS_POOLING_LAYER_HPP_
#define DEMI_LAYERS_POOLING_LAYER_HPP_

#include <memory>

#include "demi/layer.hpp"
#include "demi/layers/narrow_staging.hpp"

namespace demi {

#ifndef CPU_ONLY
struct PoolKernelShape;  ///< pooling_layer.cu
#endif

/// @brief 2-D max or average pooling, as in Caffe.
///
/// Bottom: N x C x H x W. Top: N x C x out_h x out_w with, per dimension,
/// out = ceil((in + 2 pad - kernel) / stride) + 1 (round_mode CEIL, the
/// default) or floor(...) + 1 (round_mode FLOOR, or the forks' spelling
/// ceil_mode: false, PyTorch's default); and, when either pad is non-zero, a
/// last window that would start at or beyond in + pad is dropped (out - 1).
/// global_pooling takes the kernel from the bottom's H x W (pad 0, stride 1).
/// The window of output (oh, ow) covers rows [oh stride - pad, + kernel) and
/// likewise columns.
/// - MAX: y = the largest bottom value in the window clipped to the image
///   (padding never wins). The argmax (index within the H x W plane) is kept
///   in a buffer saved for backward; an optional second top receives the
///   same indexes as floats (Caffe's "mask" top).
/// - AVE: y = sum over the window clipped to the image, divided by the
///   window's size clipped to [-pad, in + pad) only: padding cells count in
///   the divisor, as in Caffe.
/// A window lying wholly outside the image (possible only in CEIL mode with
/// stride > kernel and no pad) gives 0, with argmax -1, and no gradient.
/// STOCHASTIC pooling is rejected at set-up: this CPU implementation has
/// neither Caffe's sampling (TRAIN) nor its weighted-average (TEST) forms.
///
/// Backward reads neither the bottom nor the top data: MAX routes dy to the
/// saved argmax, AVE spreads dy / window size over the window.
///
/// Engines (pooling_param.engine, as in Caffe): CAFFE, or CUDNN (DEFAULT in
/// builds with USE_CUDNN) for a GPU layer with one top (cuDNN gives no
/// mask) and not in place. cuDNN's windows are the same only where the
/// output size equals floor((in + 2 pad - kernel) / stride) + 1 (FLOOR, or
/// CEIL when the division is exact): there MAX (deterministic) and AVE
/// (padding counted) run in cuDNN, elsewhere the CAFFE kernels. cuDNN's
/// backward reads the bottom and top data, so with this engine the layer
/// declares both.
///
/// On the CPU, DNNL (and DEFAULT, unless the net's engine says CAFFE) runs
/// oneDNN's pooling on Caffe's layout where its windows are Caffe's: MAX
/// everywhere but where a window lies wholly outside the image, AVE where
/// the divisor agrees (pad 0, or no window past in + pad). MAX keeps
/// oneDNN's workspace (which window element won) instead of the argmax, saved
/// for backward; a mask top runs the CAFFE engine. Ties between equal
/// maxima may route the gradient to another of them than CAFFE would. MAX
/// between channels-last blobs of one type (windows of at most 256 elements)
/// runs our own kernels instead (channels_last_max_pool.hpp): a byte an
/// output in that workspace, CAFFE's winners, and its gradient sums bit for
/// bit in FLOAT.
class PoolingLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Pooling"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  /// MAX may give a second top: the argmax mask.
  int MaxTopBlobs() const override {
    return layer_param_.pooling_param().pool() == PoolingParameter::MAX ? 2 : 1;
  }
  bool BackwardReadsBottomData(int) const override { return RunsCudnn(); }
  bool BackwardReadsTopData(int) const override { return RunsCudnn(); }
  EngineKind running_engine() const override { return RunningWithDnnl(DnnlReady()); }
  BlobFormats blocked_layouts() const override {
    return DnnlReady() ? BlobFormats::kPerBlob : BlobFormats::kNone;
  }
  /// oneDNN pools in the bottom's type (FLOAT16 in FLOAT, reordered); the
  /// top is reordered to its own. On a GPU, cuDNN or the CUDA kernels pool
  /// in one 16-bit type, a FLOAT bottom or top converted through scratch.
  BlobFormats narrow_blobs() const override;
  /// On a GPU in 16 bits, the CUDA kernels pool channels last too (cuDNN
  /// then runs not), a side in Caffe's layout transposed through scratch.
  BlobFormats channels_last_layouts() const override;
  /// Whether the DNNL engine runs our channels-last max pooling kernels at
  /// the current shapes and layouts (pooling_layer_dnnl.cpp).
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
#ifndef CPU_ONLY
  /// The geometry the CUDA kernels read (pooling_layer.cu).
  PoolKernelShape KernelShape() const;
  /// On a GPU: the type and layout the kernels pool in, and a bottom's or
  /// top's stand-in in them.
  NarrowStaging staging_;
#endif
#ifdef USE_CUDNN
  /// The cuDNN engine (pooling_layer_cudnn.cpp).
  struct CudnnState;
  void CudnnSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top);
  void CudnnReshape(const Blob& bottom, const Blob& top);
  /// Whether cuDNN runs at the current shape.
  bool CudnnReady() const;
  void CudnnForward(const Blob& bottom, Blob* top);
  void CudnnBackward(const Blob& top, Blob* bottom);
  /// Null for the CAFFE engine; shared_ptr leaves CudnnState incomplete here.
  std::shared_ptr<CudnnState> cudnn_;
#endif

  /// The DNNL engine (pooling_layer_dnnl.cpp).
  struct DnnlState;
  void DnnlSetUp(const std::vector<Blob*>& top);
  void DnnlReshape(const Blob& bottom, const Blob& top);
  bool DnnlReady() const;
  void DnnlForward(const Blob& bottom, Blob* top);
  void DnnlBackward(const Blob& top, Blob* bottom);
  std::shared_ptr<DnnlState> dnnl_;  ///< null for other engines

  PoolingParameter::PoolMethod method_ = PoolingParameter::MAX;
  bool global_ = false;
  bool ceil_mode_ = true;  ///< round_mode CEIL and ceil_mode true; else floor
  int64_t kernel_h_ = 0, kernel_w_ = 0;
  int64_t pad_h_ = 0, pad_w_ = 0;
  int64_t stride_h_ = 1, stride_w_ = 1;
  int64_t height_ = 0, width_ = 0;       ///< bottom plane
  int64_t pooled_h_ = 0, pooled_w_ = 0;  ///< top plane
  int64_t planes_ = 0;                   ///< N * C
  int64_t channels_ = 0;                 ///< C
  Blob argmax_;  ///< MAX only: index of the max within its H x W plane, saved for backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_POOLING_LAYER_HPP_
