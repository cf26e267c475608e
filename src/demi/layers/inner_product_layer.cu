#include "demi/layers/inner_product_layer.hpp"
#include "demi/util/convert_gpu.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

// kernels

/// y[r, j] += b[j] over the M x N top, stored in T (the sum in float).
template <typename T>
__global__ void AddToStoredRowsKernel(int64_t count, int64_t n, const float* bias, T* y) {
  ElementwiseStore(count, y, [=](int64_t i) { return Widen(y[i]) + bias[i % n]; });
}

}  // namespace

// launchers

void InnerProductLayer::ForwardStoredGpu(const Blob& bottom, Blob* top) {
  const Type type = staging_.type();
  // The FLOAT weights may have changed since the last pass.
  GpuConvert(blobs_[0]->count(), FLOAT, blobs_[0]->gpu_data(), type,
             narrow_weights_.data()->mutable_gpu_data());
  // A FLOAT top (the scores a FLOAT loss reads) takes cuBLAS's FLOAT sums
  // as they are, not rounded to 16 bits in a stand-in on the way.
  const bool float_top = top->storage_type() == FLOAT;
  const Type y_type = float_top ? FLOAT : type;
  void* y = float_top ? top->mutable_gpu_data() : staging_.MutableTopData(top);
  if (m_ > 0) {
    GpuGemmStored(false, !transpose_, m_, n_, k_, 1.0f, type, staging_.BottomData(bottom),
                  narrow_weights_.data()->gpu_data(), 0.0f, y_type, y);
  }
  if (bias_term_ && m_ > 0) {
    VisitStorageType(y_type, [&](auto tag) {
      using T = decltype(tag);
      Launch("AddToStoredRowsKernel", ElementwiseBlocks(m_ * n_), AddToStoredRowsKernel<T>, m_ * n_,
             n_, blobs_[1]->gpu_data(), static_cast<T*>(y));
    });
  }
  if (!float_top) staging_.FinishTopData(top);
}

void InnerProductLayer::BackwardStoredGpu(const Blob& top, bool propagate_down, Blob* bottom) {
  if (m_ == 0) return;
  const Type type = staging_.type();
  const void* dy = staging_.TopDiff(top);
  if (param_propagate_down(0)) {
    const void* x = staging_.BottomData(*bottom);
    float* dw = blobs_[0]->mutable_gpu_diff();
    if (transpose_) {
      GpuGemmStored(true, false, k_, n_, m_, 1.0f, type, x, dy, 1.0f, FLOAT, dw);  // += x^T dy
    } else {
      GpuGemmStored(true, false, n_, k_, m_, 1.0f, type, dy, x, 1.0f, FLOAT, dw);  // += dy^T x
    }
  }
  if (bias_term_ && param_propagate_down(1)) {
    VisitStorageType(type, [&](auto tag) {
      using T = decltype(tag);
      // The sum of each column of the M x N gradient: N channels of M values.
      GpuChannelSums(m_, n_, 1, true, StoredGradientTerm<T>{static_cast<const T*>(dy), nullptr},
                     blobs_[1]->mutable_gpu_diff());
    });
  }
  if (!propagate_down) return;
  // dx (M x K) = dy (M x N) W (N x K), or dy W^T when W is stored K x N.
  GpuGemmStored(false, transpose_, m_, k_, n_, 1.0f, type, dy, narrow_weights_.data()->gpu_data(),
                0.0f, type, staging_.MutableBottomDiff(bottom));
  staging_.FinishBottomDiff(bottom);
}

}  // namespace demi
