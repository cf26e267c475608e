#include "demi/layers/cudnn_ops.hpp"

#ifdef USE_CUDNN

#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "demi/util/cudnn.hpp"

namespace demi {

namespace {

/// An elementwise op's tensor: flat, in chunks cuDNN's int dimensions hold.
constexpr int64_t kChunk = std::numeric_limits<int>::max() / 2;

/// Runs `op(offset, n)` over [0, count) in chunks of at most kChunk.
template <typename Op>
void InChunks(int64_t count, Op op) {
  for (int64_t offset = 0; offset < count; offset += kChunk) {
    op(offset, std::min(kChunk, count - offset));
  }
}

class Activation
    : public CudnnDescriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor,
                             cudnnDestroyActivationDescriptor> {
 public:
  explicit Activation(cudnnActivationMode_t mode) {
    DEMI_CUDNN_CHECK(cudnnSetActivationDescriptor(get(), mode, CUDNN_PROPAGATE_NAN, 0.0));
  }
};

/// This thread's descriptor for `mode` (made once, not per call: these run
/// every iteration).
const Activation& ActivationFor(cudnnActivationMode_t mode) {
  thread_local std::map<cudnnActivationMode_t, std::unique_ptr<Activation>> by_mode;
  std::unique_ptr<Activation>& activation = by_mode[mode];
  if (!activation) activation = std::make_unique<Activation>(mode);
  return *activation;
}

/// This thread's tensor descriptor, reset to `shape` by each call.
const CudnnTensor& TensorFor(const std::vector<int64_t>& shape) {
  thread_local CudnnTensor tensor;
  tensor.Set(shape);
  return tensor;
}

}  // namespace

void CudnnActivationForward(cudnnActivationMode_t mode, int64_t count, const float* x, float* y) {
  const Activation& activation = ActivationFor(mode);
  InChunks(count, [&](int64_t offset, int64_t n) {
    const CudnnTensor& tensor = TensorFor({n});
    DEMI_CUDNN_CHECK(cudnnActivationForward(CudnnHandle(), activation.get(), CudnnScale::One(),
                                            tensor.get(), x + offset, CudnnScale::Zero(),
                                            tensor.get(), y + offset));
  });
}

void CudnnActivationBackward(cudnnActivationMode_t mode, int64_t count, const float* y,
                             const float* dy, float* dx) {
  const Activation& activation = ActivationFor(mode);
  InChunks(count, [&](int64_t offset, int64_t n) {
    const CudnnTensor& tensor = TensorFor({n});
    // x is given as y: the derivatives depend on y only (for ReLU, y > 0
    // exactly where x > 0), so in-place layers work.
    DEMI_CUDNN_CHECK(cudnnActivationBackward(
        CudnnHandle(), activation.get(), CudnnScale::One(), tensor.get(), y + offset, tensor.get(),
        dy + offset, tensor.get(), y + offset, CudnnScale::Zero(), tensor.get(), dx + offset));
  });
}

void CudnnSoftmaxForward(int64_t outer, int64_t channels, int64_t inner, const float* x, float* y) {
  const CudnnTensor& tensor = TensorFor({outer, channels, inner, 1});
  DEMI_CUDNN_CHECK(cudnnSoftmaxForward(CudnnHandle(), CUDNN_SOFTMAX_ACCURATE,
                                       CUDNN_SOFTMAX_MODE_CHANNEL, CudnnScale::One(), tensor.get(),
                                       x, CudnnScale::Zero(), tensor.get(), y));
}

void CudnnSoftmaxBackward(int64_t outer, int64_t channels, int64_t inner, const float* y,
                          const float* dy, float* dx) {
  const CudnnTensor& tensor = TensorFor({outer, channels, inner, 1});
  DEMI_CUDNN_CHECK(cudnnSoftmaxBackward(CudnnHandle(), CUDNN_SOFTMAX_ACCURATE,
                                        CUDNN_SOFTMAX_MODE_CHANNEL, CudnnScale::One(), tensor.get(),
                                        y, tensor.get(), dy, CudnnScale::Zero(), tensor.get(), dx));
}

}  // namespace demi

#endif  // USE_CUDNN
