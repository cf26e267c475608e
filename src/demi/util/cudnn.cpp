#include "demi/util/cudnn.hpp"

#ifdef USE_CUDNN

#include <map>

#include "demi/common.hpp"
#include "demi/util/cuda.hpp"

namespace demi {

namespace {

class ThreadCudnnHandles {
 public:
  ~ThreadCudnnHandles() {
    for (auto& [device, handle] : by_device_) {
      if (cudaSetDevice(device) == cudaSuccess) cudnnDestroy(handle);
    }
  }
  cudnnHandle_t Current() {
    int device = 0;
    DEMI_CUDA_CHECK(cudaGetDevice(&device));
    cudnnHandle_t& handle = by_device_[device];
    if (handle == nullptr) {
      DEMI_CUDNN_CHECK(cudnnCreate(&handle));
      DEMI_CUDNN_CHECK(cudnnSetStream(handle, CudaStream()));
    }
    return handle;
  }

 private:
  std::map<int, cudnnHandle_t> by_device_;
};

std::vector<int> ToInts(const std::vector<int64_t>& values) {
  std::vector<int> ints;
  for (int64_t v : values) {
    DEMI_CHECK(v >= 0 && v <= INT32_MAX, "a dimension or stride of ", v,
               " does not fit cuDNN's 32-bit int: use a smaller batch, or engine: CAFFE for the "
               "layer");
    ints.push_back(static_cast<int>(v));
  }
  return ints;
}

/// cuDNN descriptors have at least 4 dimensions: pad with trailing 1s.
std::vector<int64_t> PadTo4(std::vector<int64_t> shape) {
  while (shape.size() < 4) shape.push_back(1);
  return shape;
}

}  // namespace

cudnnHandle_t CudnnHandle() {
  // The stream's thread-local holder is made first, so it dies after ours:
  // cudnnDestroy never runs on a handle whose stream is gone.
  CudaStream();
  thread_local ThreadCudnnHandles handles;
  return handles.Current();
}

cudnnDataType_t CudnnDataType(Type type) {
  switch (type) {
    case FLOAT16:
      return CUDNN_DATA_HALF;
    case BFLOAT16:
      return CUDNN_DATA_BFLOAT16;
    default:
      CHECK_EQ(type, FLOAT) << "cuDNN tensors are stored in FLOAT, FLOAT16 or BFLOAT16 here";
      return CUDNN_DATA_FLOAT;
  }
}

void CudnnTensor::Set(const std::vector<int64_t>& shape, Type type) {
  const std::vector<int64_t> padded = PadTo4(shape);
  std::vector<int64_t> strides(padded.size(), 1);
  for (int i = static_cast<int>(padded.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * padded[i + 1];
  }
  Set(padded, strides, type);
}

void CudnnTensor::Set(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                      Type type) {
  CHECK_EQ(shape.size(), strides.size());
  const std::vector<int> dims = ToInts(PadTo4(shape));
  std::vector<int64_t> padded_strides = strides;
  while (padded_strides.size() < dims.size()) padded_strides.push_back(1);
  const std::vector<int> stride_ints = ToInts(padded_strides);
  DEMI_CUDNN_CHECK(cudnnSetTensorNdDescriptor(
      get(), CudnnDataType(type), static_cast<int>(dims.size()), dims.data(), stride_ints.data()));
}

void CudnnTensor::SetImages(const std::vector<int64_t>& nchw, Type type, bool channels_last) {
  if (!channels_last) {
    Set(nchw, type);
    return;
  }
  DEMI_CHECK(nchw.size() == 4, "cuDNN's channels-last tensors are 4-D images; got ", nchw.size(),
             " dimensions");
  const int64_t c = nchw[1], h = nchw[2], w = nchw[3];
  Set(nchw, {h * w * c, 1, w * c, c}, type);
}

void CudnnFilter::Set(const std::vector<int64_t>& shape, Type type, bool channels_last) {
  const std::vector<int> dims = ToInts(PadTo4(shape));
  DEMI_CUDNN_CHECK(cudnnSetFilterNdDescriptor(get(), CudnnDataType(type),
                                              channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                              static_cast<int>(dims.size()), dims.data()));
}

void CudnnConvolution::Set(const std::vector<int>& pad, const std::vector<int>& stride,
                           const std::vector<int>& dilation, int group) {
  CHECK(pad.size() == stride.size() && pad.size() == dilation.size());
  DEMI_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(get(), static_cast<int>(pad.size()), pad.data(),
                                                   stride.data(), dilation.data(),
                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  DEMI_CUDNN_CHECK(cudnnSetConvolutionGroupCount(get(), group));
}

const float* CudnnScale::One() {
  static const float one = 1.0f;
  return &one;
}

const float* CudnnScale::Zero() {
  static const float zero = 0.0f;
  return &zero;
}

}  // namespace demi

#endif  // USE_CUDNN
