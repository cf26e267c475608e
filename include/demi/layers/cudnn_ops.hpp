#ifndef DEMI_LAYERS_CUDNN_OPS_HPP_
#define DEMI_LAYERS_CUDNN_OPS_HPP_

// The cuDNN engine of the elementwise activations (ReLU, Sigmoid, TanH) and
// of Softmax: stateless calls on this thread's cuDNN handle and stream.
// Built with USE_CUDNN only.
#ifdef USE_CUDNN

#include <cudnn.h>

#include <cstdint>

#include "demi/proto/demi.pb.h"

namespace demi {

/// y = f(x) over `count` elements stored in `type` (x and y may be the
/// same memory; cuDNN computes in FLOAT whatever they store).
void CudnnActivationForward(cudnnActivationMode_t mode, int64_t count, const void* x, void* y,
                            Type type = FLOAT);
/// dx = f'(.) dy from the output y alone (ReLU, sigmoid and tanh derivatives
/// are functions of y, so an in-place layer needs nothing else).
void CudnnActivationBackward(cudnnActivationMode_t mode, int64_t count, const void* y,
                             const void* dy, void* dx, Type type = FLOAT);

/// Whether cuDNN's pooling and activation calls take tensors stored in
/// `type` on the current device: FLOAT and FLOAT16 always; BFLOAT16 is
/// asked of the library once per device (one element through each), as
/// its support depends on the cuDNN release and the GPU. Where it does not,
/// Pooling and ReLU run their CUDA kernels on the type instead.
bool CudnnPoolsAndActivatesIn(Type type);

/// Softmax over the middle axis of an outer x channels x inner tensor.
void CudnnSoftmaxForward(int64_t outer, int64_t channels, int64_t inner, const float* x, float* y);
void CudnnSoftmaxBackward(int64_t outer, int64_t channels, int64_t inner, const float* y,
                          const float* dy, float* dx);

}  // namespace demi

#endif  // USE_CUDNN
#endif  // DEMI_LAYERS_CUDNN_OPS_HPP_
