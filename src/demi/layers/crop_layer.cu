#include "demi/layers/crop_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

/// The crop, passed to the kernels by value.
struct CropGeometry {
  int num_axes;
  int64_t top_shape[kMaxBlobAxes];
  int64_t offsets[kMaxBlobAxes];  ///< into A, per axis
  int64_t strides[kMaxBlobAxes];  ///< of A, per axis
};

CropGeometry MakeGeometry(const Blob& top, const std::vector<int64_t>& offsets,
                          const std::vector<int64_t>& strides) {
  CropGeometry g{};
  g.num_axes = top.num_axes();
  for (int axis = 0; axis < g.num_axes; ++axis) {
    g.top_shape[axis] = top.shape(axis);
    g.offsets[axis] = offsets[axis];
    g.strides[axis] = strides[axis];
  }
  return g;
}

// kernels

/// Offset in A of top element `e`.
__device__ int64_t SourceIndex(int64_t e, const CropGeometry& g) {
  int64_t source = 0;
  for (int axis = g.num_axes - 1; axis >= 0; --axis) {
    source += (e % g.top_shape[axis] + g.offsets[axis]) * g.strides[axis];
    e /= g.top_shape[axis];
  }
  return source;
}

/// y[e] = a[source(e)], or with `backward` da[source(e)] = dy[e] (each
/// element of A is the source of at most one top element).
__global__ void CropKernel(int64_t n, CropGeometry g, bool backward, const float* from, float* to) {
  for (int64_t e = GridStart(); e < n; e += GridStride()) {
    if (backward) {
      to[SourceIndex(e, g)] = from[e];
    } else {
      to[e] = from[SourceIndex(e, g)];
    }
  }
}

}  // namespace

// launchers

void CropLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const int64_t n = top[0]->count();
  if (n == 0) return;
  const CropGeometry g = MakeGeometry(*top[0], offsets_, strides_);
  Launch("CropKernel", CudaBlocks(n), CropKernel, n, g, false, bottom[0]->gpu_data(),
         top[0]->mutable_gpu_data());
}

void CropLayer::Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  if (propagate_down[1]) GpuSet(bottom[1]->count(), 0.0f, bottom[1]->mutable_gpu_diff());
  if (!propagate_down[0]) return;
  float* dx = bottom[0]->mutable_gpu_diff();
  GpuSet(bottom[0]->count(), 0.0f, dx);
  const int64_t n = top[0]->count();
  if (n == 0) return;
  const CropGeometry g = MakeGeometry(*top[0], offsets_, strides_);
  Launch("CropKernel", CudaBlocks(n), CropKernel, n, g, true, top[0]->gpu_diff(), dx);
}

}  // namespace demi
