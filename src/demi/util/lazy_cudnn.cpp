// The cuDNN functions Demitasse calls, loaded from libcudnn on first use (see
// util/cuda_libraries.hpp). libcudnn.so.9 is cuDNN's front library: it loads
// its engine libraries (ops, cnn, ...) itself. Built with USE_CUDNN only.
#ifdef USE_CUDNN

#include <cudnn.h>

#include "demi/util/cuda_libraries.hpp"

namespace {

const demi::LazyLibrary kCudnn = {
    "cuDNN", "libcudnn.so." DEMI_LAZY_STRING(CUDNN_MAJOR),
    "running on a GPU (CPU runs need no CUDA library)",
    "cuDNN " DEMI_LAZY_STRING(CUDNN_MAJOR) " for CUDA " DEMI_LAZY_STRING(CUBLAS_VER_MAJOR)
    ": NVIDIA's package libcudnn" DEMI_LAZY_STRING(CUDNN_MAJOR) "-cuda-"
    DEMI_LAZY_STRING(CUBLAS_VER_MAJOR)};

}  // namespace

// The most common return type; LAZY spells it once.
#define LAZY(name, params, args) DEMI_LAZY_FUNCTION(kCudnn, cudnnStatus_t, name, params, args)
using Tensor = cudnnTensorDescriptor_t;
using Filter = cudnnFilterDescriptor_t;
using Conv = cudnnConvolutionDescriptor_t;

// clang-format off
// Handles and errors.
DEMI_LAZY_FUNCTION(kCudnn, const char*, cudnnGetErrorString, (cudnnStatus_t status), (status))
LAZY(cudnnCreate, (cudnnHandle_t* handle), (handle))
LAZY(cudnnDestroy, (cudnnHandle_t handle), (handle))
LAZY(cudnnSetStream, (cudnnHandle_t handle, cudaStream_t stream), (handle, stream))

// Descriptors.
LAZY(cudnnCreateTensorDescriptor, (Tensor* desc), (desc))
LAZY(cudnnDestroyTensorDescriptor, (Tensor desc), (desc))
LAZY(cudnnSetTensorNdDescriptor,
     (Tensor desc, cudnnDataType_t type, int dims, const int dim[], const int stride[]),
     (desc, type, dims, dim, stride))
LAZY(cudnnCreateFilterDescriptor, (Filter* desc), (desc))
LAZY(cudnnDestroyFilterDescriptor, (Filter desc), (desc))
LAZY(cudnnSetFilterNdDescriptor,
     (Filter desc, cudnnDataType_t type, cudnnTensorFormat_t format, int dims, const int dim[]),
     (desc, type, format, dims, dim))
LAZY(cudnnCreateConvolutionDescriptor, (Conv* desc), (desc))
LAZY(cudnnDestroyConvolutionDescriptor, (Conv desc), (desc))
LAZY(cudnnSetConvolutionNdDescriptor,
     (Conv desc, int length, const int pad[], const int stride[], const int dilation[],
      cudnnConvolutionMode_t mode, cudnnDataType_t type),
     (desc, length, pad, stride, dilation, mode, type))
LAZY(cudnnSetConvolutionGroupCount, (Conv desc, int groups), (desc, groups))
LAZY(cudnnSetConvolutionMathType, (Conv desc, cudnnMathType_t math), (desc, math))
LAZY(cudnnCreatePoolingDescriptor, (cudnnPoolingDescriptor_t* desc), (desc))
LAZY(cudnnDestroyPoolingDescriptor, (cudnnPoolingDescriptor_t desc), (desc))
LAZY(cudnnSetPooling2dDescriptor,
     (cudnnPoolingDescriptor_t desc, cudnnPoolingMode_t mode, cudnnNanPropagation_t nan,
      int window_h, int window_w, int pad_h, int pad_w, int stride_h, int stride_w),
     (desc, mode, nan, window_h, window_w, pad_h, pad_w, stride_h, stride_w))
LAZY(cudnnCreateLRNDescriptor, (cudnnLRNDescriptor_t* desc), (desc))
LAZY(cudnnDestroyLRNDescriptor, (cudnnLRNDescriptor_t desc), (desc))
LAZY(cudnnSetLRNDescriptor,
     (cudnnLRNDescriptor_t desc, unsigned n, double alpha, double beta, double k),
     (desc, n, alpha, beta, k))
LAZY(cudnnCreateActivationDescriptor, (cudnnActivationDescriptor_t* desc), (desc))
LAZY(cudnnDestroyActivationDescriptor, (cudnnActivationDescriptor_t desc), (desc))
LAZY(cudnnSetActivationDescriptor,
     (cudnnActivationDescriptor_t desc, cudnnActivationMode_t mode, cudnnNanPropagation_t nan,
      double coef),
     (desc, mode, nan, coef))

// Convolution: algorithm choice, workspace sizes, the three passes and bias.
LAZY(cudnnFindConvolutionForwardAlgorithm,
     (cudnnHandle_t handle, const Tensor x, const Filter w, const Conv conv, const Tensor y,
      const int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* perf),
     (handle, x, w, conv, y, requested, returned, perf))
LAZY(cudnnFindConvolutionBackwardDataAlgorithm,
     (cudnnHandle_t handle, const Filter w, const Tensor dy, const Conv conv, const Tensor dx,
      const int requested, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf),
     (handle, w, dy, conv, dx, requested, returned, perf))
LAZY(cudnnFindConvolutionBackwardFilterAlgorithm,
     (cudnnHandle_t handle, const Tensor x, const Tensor dy, const Conv conv, const Filter dw,
      const int requested, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf),
     (handle, x, dy, conv, dw, requested, returned, perf))
LAZY(cudnnGetConvolutionForwardAlgorithm_v7,
     (cudnnHandle_t handle, const Tensor x, const Filter w, const Conv conv, const Tensor y,
      const int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* perf),
     (handle, x, w, conv, y, requested, returned, perf))
LAZY(cudnnGetConvolutionBackwardDataAlgorithm_v7,
     (cudnnHandle_t handle, const Filter w, const Tensor dy, const Conv conv, const Tensor dx,
      const int requested, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf),
     (handle, w, dy, conv, dx, requested, returned, perf))
LAZY(cudnnGetConvolutionBackwardFilterAlgorithm_v7,
     (cudnnHandle_t handle, const Tensor x, const Tensor dy, const Conv conv, const Filter dw,
      const int requested, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf),
     (handle, x, dy, conv, dw, requested, returned, perf))
LAZY(cudnnGetConvolutionForwardWorkspaceSize,
     (cudnnHandle_t handle, const Tensor x, const Filter w, const Conv conv, const Tensor y,
      cudnnConvolutionFwdAlgo_t algo, size_t* bytes),
     (handle, x, w, conv, y, algo, bytes))
LAZY(cudnnGetConvolutionBackwardDataWorkspaceSize,
     (cudnnHandle_t handle, const Filter w, const Tensor dy, const Conv conv, const Tensor dx,
      cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes),
     (handle, w, dy, conv, dx, algo, bytes))
LAZY(cudnnGetConvolutionBackwardFilterWorkspaceSize,
     (cudnnHandle_t handle, const Tensor x, const Tensor dy, const Conv conv, const Filter dw,
      cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes),
     (handle, x, dy, conv, dw, algo, bytes))
LAZY(cudnnConvolutionForward,
     (cudnnHandle_t handle, const void* alpha, const Tensor x_desc, const void* x,
      const Filter w_desc, const void* w, const Conv conv, cudnnConvolutionFwdAlgo_t algo,
      void* workspace, size_t workspace_bytes, const void* beta, const Tensor y_desc, void* y),
     (handle, alpha, x_desc, x, w_desc, w, conv, algo, workspace, workspace_bytes, beta, y_desc,
      y))
LAZY(cudnnConvolutionBackwardData,
     (cudnnHandle_t handle, const void* alpha, const Filter w_desc, const void* w,
      const Tensor dy_desc, const void* dy, const Conv conv, cudnnConvolutionBwdDataAlgo_t algo,
      void* workspace, size_t workspace_bytes, const void* beta, const Tensor dx_desc, void* dx),
     (handle, alpha, w_desc, w, dy_desc, dy, conv, algo, workspace, workspace_bytes, beta,
      dx_desc, dx))
LAZY(cudnnConvolutionBackwardFilter,
     (cudnnHandle_t handle, const void* alpha, const Tensor x_desc, const void* x,
      const Tensor dy_desc, const void* dy, const Conv conv,
      cudnnConvolutionBwdFilterAlgo_t algo, void* workspace, size_t workspace_bytes,
      const void* beta, const Filter dw_desc, void* dw),
     (handle, alpha, x_desc, x, dy_desc, dy, conv, algo, workspace, workspace_bytes, beta,
      dw_desc, dw))
LAZY(cudnnConvolutionBackwardBias,
     (cudnnHandle_t handle, const void* alpha, const Tensor dy_desc, const void* dy,
      const void* beta, const Tensor db_desc, void* db),
     (handle, alpha, dy_desc, dy, beta, db_desc, db))
LAZY(cudnnAddTensor,
     (cudnnHandle_t handle, const void* alpha, const Tensor a_desc, const void* a,
      const void* beta, const Tensor c_desc, void* c),
     (handle, alpha, a_desc, a, beta, c_desc, c))

// Pooling, LRN, activations, softmax.
LAZY(cudnnPoolingForward,
     (cudnnHandle_t handle, const cudnnPoolingDescriptor_t pool, const void* alpha,
      const Tensor x_desc, const void* x, const void* beta, const Tensor y_desc, void* y),
     (handle, pool, alpha, x_desc, x, beta, y_desc, y))
LAZY(cudnnPoolingBackward,
     (cudnnHandle_t handle, const cudnnPoolingDescriptor_t pool, const void* alpha,
      const Tensor y_desc, const void* y, const Tensor dy_desc, const void* dy,
      const Tensor x_desc, const void* x, const void* beta, const Tensor dx_desc, void* dx),
     (handle, pool, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc, dx))
LAZY(cudnnLRNCrossChannelForward,
     (cudnnHandle_t handle, cudnnLRNDescriptor_t lrn, cudnnLRNMode_t mode, const void* alpha,
      const Tensor x_desc, const void* x, const void* beta, const Tensor y_desc, void* y),
     (handle, lrn, mode, alpha, x_desc, x, beta, y_desc, y))
LAZY(cudnnLRNCrossChannelBackward,
     (cudnnHandle_t handle, cudnnLRNDescriptor_t lrn, cudnnLRNMode_t mode, const void* alpha,
      const Tensor y_desc, const void* y, const Tensor dy_desc, const void* dy,
      const Tensor x_desc, const void* x, const void* beta, const Tensor dx_desc, void* dx),
     (handle, lrn, mode, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc, dx))
LAZY(cudnnActivationForward,
     (cudnnHandle_t handle, cudnnActivationDescriptor_t act, const void* alpha,
      const Tensor x_desc, const void* x, const void* beta, const Tensor y_desc, void* y),
     (handle, act, alpha, x_desc, x, beta, y_desc, y))
LAZY(cudnnActivationBackward,
     (cudnnHandle_t handle, cudnnActivationDescriptor_t act, const void* alpha,
      const Tensor y_desc, const void* y, const Tensor dy_desc, const void* dy,
      const Tensor x_desc, const void* x, const void* beta, const Tensor dx_desc, void* dx),
     (handle, act, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc, dx))
LAZY(cudnnSoftmaxForward,
     (cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
      const void* alpha, const Tensor x_desc, const void* x, const void* beta,
      const Tensor y_desc, void* y),
     (handle, algo, mode, alpha, x_desc, x, beta, y_desc, y))
LAZY(cudnnSoftmaxBackward,
     (cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
      const void* alpha, const Tensor y_desc, const void* y, const Tensor dy_desc,
      const void* dy, const void* beta, const Tensor dx_desc, void* dx),
     (handle, algo, mode, alpha, y_desc, y, dy_desc, dy, beta, dx_desc, dx))

// Batch normalization.
LAZY(cudnnBatchNormalizationForwardTraining,
     (cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
      const Tensor x_desc, const void* x, const Tensor y_desc, void* y, const Tensor bn_desc,
      const void* scale, const void* bias, double average_factor, void* running_mean,
      void* running_variance, double epsilon, void* save_mean, void* save_inv_variance),
     (handle, mode, alpha, beta, x_desc, x, y_desc, y, bn_desc, scale, bias, average_factor,
      running_mean, running_variance, epsilon, save_mean, save_inv_variance))
LAZY(cudnnBatchNormalizationBackward,
     (cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void* alpha_data,
      const void* beta_data, const void* alpha_param, const void* beta_param,
      const Tensor x_desc, const void* x, const Tensor dy_desc, const void* dy,
      const Tensor dx_desc, void* dx, const Tensor bn_desc, const void* scale, void* dscale,
      void* dbias, double epsilon, const void* saved_mean, const void* saved_inv_variance),
     (handle, mode, alpha_data, beta_data, alpha_param, beta_param, x_desc, x, dy_desc, dy,
      dx_desc, dx, bn_desc, scale, dscale, dbias, epsilon, saved_mean, saved_inv_variance))
// clang-format on

#endif  // USE_CUDNN
