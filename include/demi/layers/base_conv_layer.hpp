#ifndef DEMI_LAYERS_BASE_CONV_LAYER_HPP_
#define DEMI_LAYERS_BASE_CONV_LAYER_HPP_

#include <cstddef>
#include <memory>

#include "demi/layer.hpp"
#include "demi/util/im2col.hpp"

namespace demi {

/// Reads the window settings of `param.convolution_param()` (Caffe's
/// kernel_size, pad, stride, dilation: 1 value for both dims or 2 for h then
/// w; kernel_h/kernel_w, pad_h/pad_w, stride_h/stride_w replace them) for the
/// N x C x H x W `bottom`, checking axis 1, a 4-D bottom and non-zero kernel,
/// stride and dilation. Channels come from the bottom; height and width are
/// left 0. Errors name the layer's type and name.
ConvGeometry ReadConvGeometry(const LayerParameter& param, const Blob& bottom);

/// Checks that the dilated window of `g` fits in `bottom` (N x C x H x W)
/// padded by g's pad, so that convolution gives at least one output.
void CheckConvWindowFits(const LayerParameter& param, const ConvGeometry& g, const Blob& bottom);

/// @brief What Convolution and Deconvolution share, as in Caffe's
/// BaseConvolutionLayer: the convolution_param, the learnable W and b, the
/// geometry, and the per-image GEMMs.
///
/// Both layers are described by one convolution that maps an "image" of
/// conv_in channels to an "output" of conv_out channels:
/// - Convolution: image = bottom (C channels), output = top (num_output);
/// - Deconvolution (reverse_dimensions): image = top (num_output channels),
///   output = bottom (C); the layer runs that convolution backwards.
/// W is conv_out x (conv_in / group) x kernel_h x kernel_w (so Convolution's
/// W is num_output x C / group x kh x kw and Deconvolution's is
/// C x num_output / group x kh x kw, as Caffe stores them); b has num_output
/// entries, added per top channel.
///
/// Bottoms: one or more N x C x H x W blobs of one shape; top i is the
/// result for bottom i. Channels and num_output must be divisible by group.
/// Only axis 1 (2-D images) is supported. Images are unfolded by Im2col into
/// a columns buffer (scratch) of (conv_in * kh * kw) x (output spatial size);
/// 1x1 kernels with stride 1 and no padding use the image itself.
/// Backward reads the bottoms (for dW) and not the tops.
///
/// Engines (convolution_param.engine, as in Caffe): CAFFE runs the GEMMs
/// above (on the GPU with cuBLAS and GpuIm2col); CUDNN, and DEFAULT in builds
/// with USE_CUDNN, runs a GPU layer with cuDNN over the whole batch. Under
/// GpuMath::kDeterministic, cuDNN's algorithms are picked by its heuristics
/// (the _v7 queries) among those that are deterministic and use plain FP32
/// math (FMA, never TF32 tensor ops, so the GPU agrees with the CPU); under
/// kTensorOps, cudnnFind times every algorithm in tensor-op math (TF32 on
/// Ampere and newer) once per problem and process, and the fastest is taken.
/// Either way an algorithm needs at most context().cudnn_workspace_bytes
/// (the net's cudnn_workspace_mb, 256 by default) of workspace; the workspace
/// is a scratch buffer sized in Reshape to the largest of the three chosen
/// algorithms, so the memory planner places it. A shape for which no such
/// algorithm exists runs the CAFFE engine.
///
/// On the CPU, DNNL (and DEFAULT, unless the net's engine says CAFFE) runs
/// the whole batch through oneDNN's convolution primitives in the layouts
/// oneDNN picks (blocked channels); the bottoms, tops and params keep Caffe's
/// layout and are reordered through scratch buffers the planner places, as is
/// oneDNN's scratchpad. Params' gradients are accumulated, as in Caffe.
class BaseConvolutionLayer : public OneBodyLayer<Layer> {
 public:
  bool CanReplay() const override { return true; }
  using OneBodyLayer::OneBodyLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  int MinBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  bool EqualNumBottomTopBlobs() const override { return true; }
  bool BackwardReadsBottomData(int) const override { return true; }
  bool BackwardReadsTopData(int) const override { return false; }
  EngineKind running_engine() const override { return RunningWithDnnl(DnnlReady()); }
  /// The primitives are made for one layout per side: several bottoms
  /// (sharing the weights) keep Caffe's.
  BlobFormats blocked_layouts() const override {
    return DnnlReady() && layer_param_.bottom_size() == 1 ? BlobFormats::kPerBlob
                                                          : BlobFormats::kNone;
  }
  /// Convolution's oneDNN primitives and cuDNN calls read and write 16-bit
  /// blobs (the table lets Convolution, not Deconvolution, store 16 bits);
  /// on the GPU a FLOAT bottom or top is converted through scratch.
  BlobFormats narrow_blobs() const override;
  /// cuDNN's 16-bit convolutions of one group (tensor cores read NHWC
  /// without a transpose); a side in Caffe's layout is transposed through
  /// scratch (NarrowStaging).
  BlobFormats channels_last_layouts() const override;

 protected:
  /// True for Deconvolution: the convolution's image is the top.
  virtual bool reverse_dimensions() const = 0;
  /// Whether cuDNN may run this layer channels last: a convolution of one
  /// group and one bottom.
  bool MayRunChannelsLast() const {
    return !reverse_dimensions() && group_ == 1 && layer_param_.bottom_size() == 1;
  }
  /// Sets top_h_, top_w_, the image size in geometry_ and output_spatial_
  /// from the bottom's H x W, checking that the sizes are usable.
  virtual void ComputeOutputShape(const Blob& bottom) = 0;

  // Forward and Backward, written once for both layers and both devices:
  // the convolution maps image to output, and Deconvolution (whose bottom
  // is the output) runs its adjoint.
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;

  /// output = W * im2col(image), per group; `columns_ready` reuses columns
  /// already unfolded from this image. Pointers on context().device, as for
  /// the helpers below.
  void ForwardGemm(const float* image, const float* weights, float* output,
                   bool columns_ready = false);
  /// image = col2im(W^T * output), per group: the adjoint of ForwardGemm.
  void BackwardGemm(const float* output, const float* weights, float* image);
  /// weights_diff += output * im2col(image)^T, per group.
  void WeightGemm(const float* image, const float* output, float* weights_diff);
  /// Adds b[m] to every position of top channel m of all num_ images of one top.
  void AddBias(float* top_data) const;
  /// db[m] += sum over images and positions of channel m of one top's gradient.
  void AccumulateBiasGradient(const float* top_diff);

#ifndef CPU_ONLY
  /// The bias helpers' kernels (base_conv_layer.cu), on device pointers.
  void AddBiasGpu(float* top_data) const;
  void AccumulateBiasGradientGpu(const float* top_diff);
  /// The same on a top stored in `type`, channels last where `channels_last`.
  void AddBiasGpu(Type type, bool channels_last, void* top_data) const;
  void AccumulateBiasGradientGpu(Type type, bool channels_last, const void* top_diff);
#endif

#ifdef USE_CUDNN
  /// The cuDNN engine (base_conv_layer_cudnn.cpp), on whole-batch device
  /// pointers; "image" and "output" name the convolution's sides as above.
  struct CudnnState;
  void CudnnSetUp();
  void CudnnReshape(const Blob& bottom, const Blob& top);
  /// The two ways CudnnReshape picks the three passes' algorithms (GpuMath).
  void CudnnChooseDeterministicAlgorithms();
  void CudnnMeasureAlgorithms(const Blob& bottom);
  /// Whether this layer runs cuDNN at the current shape.
  bool CudnnReady() const;
  /// Whether it may run channels last: cuDNN runs it in 16 bits, and found
  /// an algorithm channels last at this shape or has not tried (a refusal is
  /// remembered, so its blobs then keep Caffe's layout instead of the net
  /// offering the layout again each time it runs in Caffe's).
  bool CudnnTakesChannelsLast() const;
  /// Whether it may store 16-bit blobs: cuDNN runs it, and found an
  /// algorithm in the 16-bit type at this shape or has not tried (a refusal
  /// is remembered as above, so its blobs then stay FLOAT).
  bool CudnnTakesNarrowBlobs() const;
  /// Forward and Backward of one bottom and top, bias included, in the
  /// type CudnnReshape chose (FLOAT, or a 16-bit one through NarrowStaging).
  void CudnnForward(const Blob& bottom, Blob* top);
  void CudnnBackward(const Blob& top, bool propagate_down, Blob* bottom);
  /// Pointers below are in that type.
  void CudnnConvolve(const void* image, const void* weights, void* output);
  /// image = the adjoint of CudnnConvolve applied to output.
  void CudnnConvolveAdjoint(const void* output, const void* weights, void* image);
  /// The weights' gradient += the weight gradient of CudnnConvolve.
  void CudnnWeightGradient(const void* image, const void* output);
  /// The weights in that type.
  const void* CudnnWeights();
  /// Null for the CAFFE engine. shared_ptr: its type-erased deleter lets
  /// this header leave CudnnState incomplete.
  std::shared_ptr<CudnnState> cudnn_;
#endif

  /// The DNNL engine (base_conv_layer_dnnl.cpp), on whole-batch host
  /// pointers; "image" and "output" name the convolution's sides as above.
  struct DnnlState;
  void DnnlSetUp();
  void DnnlReshape(const Blob& bottom, const Blob& top);
  /// Whether this layer runs oneDNN at the current shape.
  bool DnnlReady() const;
  /// output = conv(image) (+ b for Convolution). Image and output point to
  /// a blob's bytes in its storage type.
  void DnnlConvolve(const void* image, const float* weights, void* output);
  /// image = the adjoint of DnnlConvolve applied to output.
  void DnnlConvolveAdjoint(const void* output, const float* weights, void* image);
  /// weights_diff += dW and, for Convolution, bias_diff += db of
  /// DnnlConvolve for the output gradient `output`; either may be null.
  void DnnlWeightGradient(const void* image, const void* output, float* weights_diff,
                          float* bias_diff);
  /// Null for other engines (shared_ptr for the same reason as cudnn_).
  /// Deconvolution's bias on the DNNL engine, in the top's layout: top += b
  /// per channel, and bias_diff += the top gradient's sum per channel.
  void DnnlAddBias(Blob* top);
  void DnnlAddBiasGradient(const Blob& top, float* bias_diff);
  std::shared_ptr<DnnlState> dnnl_;

  ConvGeometry geometry_{};  ///< the convolution's image (all conv_in channels)
  int64_t channels_ = 0;     ///< bottom channels
  int64_t num_output_ = 0;   ///< top channels
  int64_t group_ = 1;
  bool bias_term_ = true;
  bool is_1x1_ = false;  ///< the image is its own column matrix
  int64_t conv_out_channels_ = 0;
  int64_t num_ = 0;  ///< images per bottom
  int64_t top_h_ = 0, top_w_ = 0;
  int64_t output_spatial_ = 0;  ///< spatial size of the convolution's output
  int64_t kernel_dim_ = 0;      ///< (conv_in / group) * kh * kw: rows of a group's columns
  Blob columns_;                ///< (conv_in * kh * kw) x output_spatial_, scratch

 private:
  /// Runs the cuDNN (GPU) or DNNL (CPU) engine for one bottom and its top
  /// where it is ready; false leaves the pass to the GEMMs.
  bool EngineForward(const Blob& bottom, const float* weights, Blob* top);
  bool EngineBackward(const Blob& top, bool propagate_down, Blob* bottom);
};

}  // namespace demi

#endif  // DEMI_LAYERS_BASE_CONV_LAYER_HPP_
