#include "demi/layers/dropout_layer.hpp"
#include "demi/util/convert_gpu.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math.hpp"
#include "demi/util/stored_types.cuh"

namespace demi {

namespace {

// kernels

/// Turns the uniform draws u into the scaled mask (u >= ratio keeps the
/// element), in place, and applies it: y = x * mask, stored in T.
template <typename T>
__global__ void DropoutForwardKernel(int64_t n, float ratio, float scale, const T* x, float* mask,
                                     T* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const float m = mask[i] >= ratio ? scale : 0.0f;
    mask[i] = m;
    y[i] = Narrow<T>(Widen(x[i]) * m);
  }
}

/// to = from * mask, stored in T (the mask, already scaled, FLOAT).
template <typename T>
__global__ void MaskStoredKernel(int64_t n, const T* from, const float* mask, T* to) {
  ElementwiseStore(n, to, [=](int64_t i) { return Widen(from[i]) * mask[i]; });
}

}  // namespace

// launchers

void DropoutLayer::ApplyMaskGpu(Type type, int64_t count, const void* from, void* to) const {
  if (phase_ != TRAIN) {
    if (to != from) GpuConvert(count, type, from, type, to);
    return;
  }
  if (count == 0) return;
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    Launch("MaskStoredKernel", ElementwiseBlocks(count), MaskStoredKernel<T>, count,
           static_cast<const T*>(from), mask_.gpu_data(), static_cast<T*>(to));
  });
}

void DropoutLayer::StageHostInputs() {
  if (phase_ != TRAIN || mask_.count() == 0) return;
  // Drawn on the host from the layer's stream, as the CPU code does, so both
  // devices drop the same elements; over the last mask without fetching it
  // (which would wait for the device).
  RngUniform(mask_.count(), 0.0f, 1.0f, static_cast<float*>(mask_.data()->overwrite_cpu_data()),
             rng());
  mask_.gpu_data();
}

void DropoutLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t count = bottom[0]->count();
  const Type type = top[0]->storage_type();
  const void* x = bottom[0]->data()->gpu_data();
  void* y = top[0]->data()->mutable_gpu_data();
  if (phase_ != TRAIN) return ApplyMaskGpu(type, count, x, y);  // a copy, unless in place
  if (!captured()) StageHostInputs();
  if (count == 0) return;
  VisitStorageType(type, [&](auto tag) {
    using T = decltype(tag);
    Launch("DropoutForwardKernel", CudaBlocks(count), DropoutForwardKernel<T>, count, ratio_,
           scale_, static_cast<const T*>(x), mask_.mutable_gpu_data(), static_cast<T*>(y));
  });
}

void DropoutLayer::Backward_gpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  const Type type = top[0]->storage_type();
  if (type == FLOAT) return Backward_cpu(top, propagate_down, bottom);
  if (!propagate_down[0]) return;
  ApplyMaskGpu(type, top[0]->count(), top[0]->diff()->gpu_data(),
               bottom[0]->diff()->mutable_gpu_data());
}

}  // namespace demi
