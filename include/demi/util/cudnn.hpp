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

#define DEMI_CUDNN_CHECK(call)                                                                \
  do {                                                                                        \
    const cudnnStatus_t status_ = (call);                                                     \
    CHECK_EQ(status_, CUDNN_STATUS_SUCCESS) << #call << ": " << cudnnGetErrorString(status_); \
  } while (0)

namespace demi {

/// This thread's cuDNN handle on the current device, bound to CudaStream().
cudnnHandle_t CudnnHandle();

/// A float NCHW-style tensor descriptor of any rank >= 1 (padded to 4-D, as
/// cuDNN wants), packed unless strides are given.
class CudnnTensor {
 public:
  CudnnTensor();
  ~CudnnTensor();
  CudnnTensor(const CudnnTensor&) = delete;
  CudnnTensor& operator=(const CudnnTensor&) = delete;
  void Set(const std::vector<int64_t>& shape);
  void Set(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

class CudnnFilter {
 public:
  CudnnFilter();
  ~CudnnFilter();
  CudnnFilter(const CudnnFilter&) = delete;
  CudnnFilter& operator=(const CudnnFilter&) = delete;
  /// {out channels, in channels / group, kernel dims...}
  void Set(const std::vector<int64_t>& shape);
  cudnnFilterDescriptor_t get() const { return desc_; }

 private:
  cudnnFilterDescriptor_t desc_ = nullptr;
};

class CudnnConvolution {
 public:
  CudnnConvolution();
  ~CudnnConvolution();
  CudnnConvolution(const CudnnConvolution&) = delete;
  CudnnConvolution& operator=(const CudnnConvolution&) = delete;
  /// Cross-correlation (Caffe's convolution), float math, `group` groups.
  void Set(const std::vector<int>& pad, const std::vector<int>& stride,
           const std::vector<int>& dilation, int group);
  cudnnConvolutionDescriptor_t get() const { return desc_; }

 private:
  cudnnConvolutionDescriptor_t desc_ = nullptr;
};

/// Scaling factors cuDNN takes by pointer: out = alpha * op + beta * out.
struct CudnnScale {
  static const float* One();
  static const float* Zero();
};

}  // namespace demi

#endif  // USE_CUDNN
#endif  // DEMI_UTIL_CUDNN_HPP_
