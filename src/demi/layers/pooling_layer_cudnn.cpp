// The CUDNN engine of Pooling (see pooling_layer.hpp).
#include "demi/layers/pooling_layer.hpp"

#ifdef USE_CUDNN

#include "demi/layers/cudnn_ops.hpp"
#include "demi/util/cudnn.hpp"

namespace demi {

struct PoolingLayer::CudnnState {
  CudnnPooling pool;
  CudnnTensor bottom, top;
  /// cuDNN's windows are the layer's at the current shape, and it pools the
  /// type the layer's staging_ chose, in Caffe's layout (else the CUDA
  /// kernels run).
  bool ready = false;
};

void PoolingLayer::CudnnSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (engine_.engine != EngineKind::kCudnn) return;
  cudnn_ = std::make_shared<CudnnState>();
}

void PoolingLayer::CudnnReshape(const Blob& bottom, const Blob& top) {
  CudnnState& s = *cudnn_;
  // cuDNN's output size is floor((in + 2 pad - kernel) / stride) + 1; past
  // it (CEIL rounding), its edge windows would differ from ours.
  const int64_t span_h = height_ + 2 * pad_h_ - kernel_h_;
  const int64_t span_w = width_ + 2 * pad_w_ - kernel_w_;
  // cuDNN takes no empty tensors: the CAFFE kernels handle those.
  s.ready = bottom.count() > 0 && span_h >= 0 && span_w >= 0 &&
            pooled_h_ == span_h / stride_h_ + 1 && pooled_w_ == span_w / stride_w_ + 1 &&
            CudnnPoolsAndActivatesIn(staging_.type()) && !staging_.channels_last();
  if (!s.ready) return;
  // Within those sizes every window ends inside in + pad, so AVE's divisor
  // is the whole kernel, padding included, as cuDNN counts it.
  const cudnnPoolingMode_t mode = method_ == PoolingParameter::MAX
                                      ? CUDNN_POOLING_MAX_DETERMINISTIC
                                      : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  DEMI_CUDNN_CHECK(cudnnSetPooling2dDescriptor(
      s.pool.get(), mode, CUDNN_NOT_PROPAGATE_NAN, static_cast<int>(kernel_h_),
      static_cast<int>(kernel_w_), static_cast<int>(pad_h_), static_cast<int>(pad_w_),
      static_cast<int>(stride_h_), static_cast<int>(stride_w_)));
  s.bottom.Set(bottom.shape(), staging_.type());
  s.top.Set(top.shape(), staging_.type());
}

bool PoolingLayer::CudnnReady() const { return cudnn_ && cudnn_->ready; }

void PoolingLayer::CudnnForward(const Blob& bottom, Blob* top) {
  CudnnState& s = *cudnn_;
  DEMI_CUDNN_CHECK(cudnnPoolingForward(
      CudnnHandle(), s.pool.get(), CudnnScale::One(), s.bottom.get(), staging_.BottomData(bottom),
      CudnnScale::Zero(), s.top.get(), staging_.MutableTopData(top)));
  staging_.FinishTopData(top);
}

void PoolingLayer::CudnnBackward(const Blob& top, Blob* bottom) {
  CudnnState& s = *cudnn_;
  DEMI_CUDNN_CHECK(cudnnPoolingBackward(
      CudnnHandle(), s.pool.get(), CudnnScale::One(), s.top.get(), staging_.TopData(top),
      s.top.get(), staging_.TopDiff(top), s.bottom.get(), staging_.BottomData(*bottom),
      CudnnScale::Zero(), s.bottom.get(), staging_.MutableBottomDiff(bottom)));
  staging_.FinishBottomDiff(bottom);
}

}  // namespace demi

#endif  // USE_CUDNN
