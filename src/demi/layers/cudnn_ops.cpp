#include "demi/layers/cudnn_ops.hpp"

#ifdef USE_CUDNN

#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "demi/util/cuda.hpp"
#include "demi/util/cuda_scratch.hpp"
#include "demi/util/cudnn.hpp"

namespace demi {

namespace {

/// An elementwise op's tensor: flat, in chunks cuDNN's int dimensions hold,
/// each starting as aligned as the whole (a power of two elements).
constexpr int64_t kChunk = int64_t{1} << 30;
static_assert(kChunk <= std::numeric_limits<int>::max());

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
const CudnnTensor& TensorFor(const std::vector<int64_t>& shape, Type type = FLOAT) {
  thread_local CudnnTensor tensor;
  tensor.Set(shape, type);
  return tensor;
}

/// Element `offset` of memory stored in `type`.
template <typename Pointer>
Pointer At(Pointer base, int64_t offset, Type type) {
  using Byte =
      std::conditional_t<std::is_const_v<std::remove_pointer_t<Pointer>>, const char, char>;
  return static_cast<Byte*>(base) + offset * (type == FLOAT ? 4 : 2);
}

}  // namespace

void CudnnActivationForward(cudnnActivationMode_t mode, int64_t count, const void* x, void* y,
                            Type type) {
  const Activation& activation = ActivationFor(mode);
  InChunks(count, [&](int64_t offset, int64_t n) {
    const CudnnTensor& tensor = TensorFor({n}, type);
    DEMI_CUDNN_CHECK(cudnnActivationForward(CudnnHandle(), activation.get(), CudnnScale::One(),
                                            tensor.get(), At(x, offset, type), CudnnScale::Zero(),
                                            tensor.get(), At(y, offset, type)));
  });
}

void CudnnActivationBackward(cudnnActivationMode_t mode, int64_t count, const void* y,
                             const void* dy, void* dx, Type type) {
  const Activation& activation = ActivationFor(mode);
  InChunks(count, [&](int64_t offset, int64_t n) {
    const CudnnTensor& tensor = TensorFor({n}, type);
    // x is given as y: the derivatives depend on y only (for ReLU, y > 0
    // exactly where x > 0), so in-place layers work.
    const void* y_chunk = At(y, offset, type);
    DEMI_CUDNN_CHECK(
        cudnnActivationBackward(CudnnHandle(), activation.get(), CudnnScale::One(), tensor.get(),
                                y_chunk, tensor.get(), At(dy, offset, type), tensor.get(), y_chunk,
                                CudnnScale::Zero(), tensor.get(), At(dx, offset, type)));
  });
}

bool CudnnPoolsAndActivatesIn(Type type) {
  if (type != BFLOAT16) return type == FLOAT || type == FLOAT16;
  static std::mutex mutex;
  static std::map<int, bool> by_device;
  int device = 0;
  DEMI_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  auto known = by_device.find(device);
  if (known != by_device.end()) return known->second;
  // One element, pooled by a 1 x 1 window and put through ReLU, forward and
  // backward (the layers call both).
  CudnnTensor tensor;
  tensor.Set({1, 1, 1, 1}, type);
  CudnnPooling pool;
  DEMI_CUDNN_CHECK(cudnnSetPooling2dDescriptor(pool.get(), CUDNN_POOLING_MAX_DETERMINISTIC,
                                               CUDNN_NOT_PROPAGATE_NAN, 1, 1, 0, 0, 1, 1));
  // x, y, dy and dx in slots of their own, each as aligned as an
  // allocation: a kernel loading bfloat16 pairs must not meet an odd address.
  constexpr size_t kSlot = 256;
  char* slots = static_cast<char*>(CudaScratch(4 * kSlot));
  DEMI_CUDA_CHECK(cudaMemsetAsync(slots, 0, 4 * kSlot, CudaStream()));
  void* x = slots;
  void* y = slots + kSlot;
  void* dy = slots + 2 * kSlot;
  void* dx = slots + 3 * kSlot;
  const cudnnTensorDescriptor_t t = tensor.get();
  const auto ok = [](cudnnStatus_t status) { return status == CUDNN_STATUS_SUCCESS; };
  const bool pools = ok(cudnnPoolingForward(CudnnHandle(), pool.get(), CudnnScale::One(), t, x,
                                            CudnnScale::Zero(), t, y)) &&
                     ok(cudnnPoolingBackward(CudnnHandle(), pool.get(), CudnnScale::One(), t, y, t,
                                             dy, t, x, CudnnScale::Zero(), t, dx));
  const cudnnActivationDescriptor_t relu = ActivationFor(CUDNN_ACTIVATION_RELU).get();
  const bool activates = ok(cudnnActivationForward(CudnnHandle(), relu, CudnnScale::One(), t, x,
                                                   CudnnScale::Zero(), t, y)) &&
                         ok(cudnnActivationBackward(CudnnHandle(), relu, CudnnScale::One(), t, y, t,
                                                    dy, t, x, CudnnScale::Zero(), t, dx));
  DEMI_CUDA_CHECK(cudaStreamSynchronize(CudaStream()));
  const bool takes = pools && activates;
  if (!takes) {
    LOG(INFO) << "cuDNN does not pool or activate BFLOAT16 on GPU " << device
              << ": Pooling and ReLU run our kernels there";
  }
  by_device.emplace(device, takes);
  return takes;
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
