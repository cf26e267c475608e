// The CUDNN engine of LRN, ACROSS_CHANNELS only (see lrn_layer.hpp).
#include "demi/layers/lrn_layer.hpp"

#ifdef USE_CUDNN

#include "demi/layers/cudnn_ops.hpp"
#include "demi/util/cudnn.hpp"

namespace demi {

struct LRNLayer::CudnnState {
  CudnnLRN lrn;
  CudnnTensor data;  ///< bottom and top
};

void LRNLayer::CudnnSetUp() {
  if (engine_.engine != EngineKind::kCudnn) return;
  const LRNParameter& param = layer_param_.lrn_param();
  cudnn_ = std::make_shared<CudnnState>();
  // cuDNN divides alpha by local_size itself, as Caffe's formula does.
  DEMI_CUDNN_CHECK(
      cudnnSetLRNDescriptor(cudnn_->lrn.get(), param.local_size(), param.alpha(), beta_, shift_));
}

void LRNLayer::CudnnReshape(const Blob& bottom) {
  // cuDNN takes no empty tensors; Forward_gpu and Backward_gpu skip them.
  if (bottom.count() > 0) cudnn_->data.Set(bottom.shape());
}

void LRNLayer::CudnnForward(const Blob& bottom, Blob* top) {
  CudnnState& s = *cudnn_;
  DEMI_CUDNN_CHECK(cudnnLRNCrossChannelForward(
      CudnnHandle(), s.lrn.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, CudnnScale::One(), s.data.get(),
      bottom.gpu_data(), CudnnScale::Zero(), s.data.get(), top->mutable_gpu_data()));
}

void LRNLayer::CudnnBackward(const Blob& top, Blob* bottom) {
  CudnnState& s = *cudnn_;
  DEMI_CUDNN_CHECK(cudnnLRNCrossChannelBackward(
      CudnnHandle(), s.lrn.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, CudnnScale::One(), s.data.get(),
      top.gpu_data(), s.data.get(), top.gpu_diff(), s.data.get(), bottom->gpu_data(),
      CudnnScale::Zero(), s.data.get(), bottom->mutable_gpu_diff()));
}

}  // namespace demi

#endif  // USE_CUDNN
