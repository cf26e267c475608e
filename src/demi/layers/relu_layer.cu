#include "demi/layers/elementwise.cuh"
#include "demi/layers/relu_layer.hpp"
#include "demi/util/stored_types.cuh"

namespace demi {

// kernels: the element-wise map for this layer's formulas

template void MapOnGpu(int64_t, const float*, float*, ReLUForward);
template void MapOnGpu(int64_t, const float*, const float*, float*, ReLUBackward);

namespace {

/// The formulas over blobs stored in a 16-bit T, in float.
template <typename T>
__global__ void ReLUStoredForwardKernel(int64_t n, const T* x, ReLUForward f, T* y) {
  ElementwiseStore(n, y, [=](int64_t i) { return f(Widen(x[i])); });
}

template <typename T>
__global__ void ReLUStoredBackwardKernel(int64_t n, const T* y, const T* dy, ReLUBackward f,
                                         T* dx) {
  ElementwiseStore(n, dx, [=](int64_t i) { return f(Widen(y[i]), Widen(dy[i])); });
}

}  // namespace

// launchers

void ReLULayer::ForwardStoredGpu(const Blob& bottom, Blob* top, float slope) const {
  const int64_t n = top->count();
  if (n == 0) return;
  VisitStorageType(top->storage_type(), [&](auto tag) {
    using T = decltype(tag);
    Launch("ReLUStoredForwardKernel", ElementwiseBlocks(n), ReLUStoredForwardKernel<T>, n,
           GpuDataAs<T>(bottom), ReLUForward{slope}, MutableGpuDataAs<T>(top));
  });
}

void ReLULayer::BackwardStoredGpu(const Blob& top, Blob* bottom, float slope) const {
  const int64_t n = top.count();
  if (n == 0) return;
  VisitStorageType(top.storage_type(), [&](auto tag) {
    using T = decltype(tag);
    Launch("ReLUStoredBackwardKernel", ElementwiseBlocks(n), ReLUStoredBackwardKernel<T>, n,
           GpuDataAs<T>(top), GpuDiffAs<T>(top), ReLUBackward{slope}, MutableGpuDiffAs<T>(bottom));
  });
}

}  // namespace demi
