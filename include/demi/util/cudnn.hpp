#ifndef DEMI_UTIL_CUDNN_HPP_
#define DEMI_UTIL_CUDNN_HPP_

// cuDNN as the layers' CUDNN engine uses it: checked calls, one handle per
// device and host thread (on that thread's stream), and owning descriptor
// wrappers. Built with USE_CUDNN only.
#ifdef USE_CUDNN

#include <cudnn.h>
#include <glog/logging.h>

#include <cstdint>
#include <vector>

#include "demi/proto/demi.pb.h"
#include "demi/util/cuda.hpp"

#define DEMI_CUDNN_CHECK(call) DEMI_GPU_CALL_CHECK(call, CUDNN_STATUS_SUCCESS, cudnnGetErrorString)

namespace demi {

/// This thread's cuDNN handle on the current device, bound to CudaStream().
cudnnHandle_t CudnnHandle();

/// Owns one cuDNN descriptor, made by `Create` and freed by `Destroy`.
template <typename Descriptor, cudnnStatus_t (*Create)(Descriptor*),
          cudnnStatus_t (*Destroy)(Descriptor)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() { DEMI_CUDNN_CHECK(Create(&desc_)); }
  ~CudnnDescriptor() { Destroy(desc_); }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  Descriptor get() const { return desc_; }

 private:
  Descriptor desc_ = nullptr;
};

/// cuDNN's name for a stored type (FLOAT, FLOAT16, BFLOAT16).
cudnnDataType_t CudnnDataType(Type type);

/// An NCHW-style tensor descriptor of any rank >= 1 (padded to 4-D, as
/// cuDNN wants) of elements stored in `type`, packed unless strides are
/// given.
class CudnnTensor : public CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                           cudnnDestroyTensorDescriptor> {
 public:
  void Set(const std::vector<int64_t>& shape, Type type = FLOAT);
  void Set(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
           Type type = FLOAT);
  /// N x C x H x W images, packed channels last (NHWC) where `channels_last`.
  void SetImages(const std::vector<int64_t>& nchw, Type type, bool channels_last);
};

class CudnnFilter : public CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                           cudnnDestroyFilterDescriptor> {
 public:
  /// {out channels, in channels / group, kernel dims...}, stored in that
  /// order, or with the in channels innermost (KRSC, cuDNN's NHWC filter)
  /// where `channels_last`.
  void Set(const std::vector<int64_t>& shape, Type type = FLOAT, bool channels_last = false);
};

class CudnnConvolution
    : public CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                             cudnnDestroyConvolutionDescriptor> {
 public:
  /// Cross-correlation (Caffe's convolution), float math (products summed in
  /// FLOAT whatever the tensors store), `group` groups.
  void Set(const std::vector<int>& pad, const std::vector<int>& stride,
           const std::vector<int>& dilation, int group);
};

/// A pooling window and mode, set by the layer.
using CudnnPooling = CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                                     cudnnDestroyPoolingDescriptor>;
/// Local response normalization's parameters, set by the layer.
using CudnnLRN =
    CudnnDescriptor<cudnnLRNDescriptor_t, cudnnCreateLRNDescriptor, cudnnDestroyLRNDescriptor>;

/// Scaling factors cuDNN takes by pointer: out = alpha * op + beta * out.
struct CudnnScale {
  static const float* One();
  static const float* Zero();
};

}  // namespace demi

#endif  // USE_CUDNN
#endif  // DEMI_UTIL_CUDNN_HPP_
