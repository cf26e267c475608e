// DummyData on a GPU: the common fillers fill on the device (see the header).
#include <cstdint>

#include "demi/layers/dummy_data_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

/// The index-th output of SplitMix64 started at `seed`: the state advances by
/// the golden-ratio increment and is mixed by two xor-shift-multiply rounds,
/// so every element draws independently of the others.
__device__ inline uint64_t SplitMix64(uint64_t seed, int64_t index) {
  uint64_t z = seed + (static_cast<uint64_t>(index) + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// 24 random bits as a float in [0, 1).
__device__ inline float UnitInterval(uint64_t bits) {
  return static_cast<float>(bits & 0xFFFFFFu) * (1.0f / 16777216.0f);
}

__global__ void UniformFillKernel(int64_t n, uint64_t seed, float low, float range, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    y[i] = low + range * UnitInterval(SplitMix64(seed, i));
  }
}

/// Box-Muller on two 24-bit uniforms of one draw: u1 in (0, 1] keeps the
/// logarithm finite.
__global__ void GaussianFillKernel(int64_t n, uint64_t seed, float mean, float std, float* y) {
  for (int64_t i = GridStart(); i < n; i += GridStride()) {
    const uint64_t bits = SplitMix64(seed, i);
    const float u1 = 1.0f - UnitInterval(bits >> 40);
    const float u2 = UnitInterval(bits >> 16);
    y[i] = mean + std * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  }
}

/// A 64-bit seed from the layer's stream (two 32-bit draws).
uint64_t DrawSeed(RandomEngine* engine) {
  const uint64_t high = (*engine)();
  return (high << 32) | (*engine)();
}

}  // namespace

// launchers

void DummyDataLayer::Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  for (size_t i = 0; i < top.size(); ++i) {
    const FillerParameter& p = fillers_[i]->param();
    const int64_t n = top[i]->count();
    if (p.type() == "constant") {
      GpuSet(n, p.value(), top[i]->mutable_gpu_data());
    } else if (p.type() == "uniform") {
      DEMI_CHECK(p.min() <= p.max(), "uniform filler needs min <= max, got min ", p.min(),
                 " and max ", p.max());
      Launch("UniformFillKernel", CudaBlocks(n), UniformFillKernel, n, DrawSeed(rng()), p.min(),
             p.max() - p.min(), top[i]->mutable_gpu_data());
    } else if (p.type() == "gaussian" && p.sparse() < 0) {
      DEMI_CHECK(p.std() > 0, "gaussian filler needs std > 0, got ", p.std());
      Launch("GaussianFillKernel", CudaBlocks(n), GaussianFillKernel, n, DrawSeed(rng()), p.mean(),
             p.std(), top[i]->mutable_gpu_data());
    } else {
      fillers_[i]->Fill(top[i], rng());  // on the host; read on the device as any host write
    }
  }
}

}  // namespace demi
