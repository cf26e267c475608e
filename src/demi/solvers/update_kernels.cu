// The fused update of every rule on the GPU: one kernel per rule over the
// table of rows, each float regularized, stepped and subtracted in place.
// Arithmetic goes through the round-to-nearest intrinsics so that nvcc fuses
// no multiply-add: each float sees the CPU's operations in the CPU's order
// (solvers/*.cpp, built with -ffp-contract=off), sqrt and division being
// IEEE-rounded on both.
#include <algorithm>

#include "demi/solvers/update_kernels.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

__device__ inline float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline float Add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline float Sub(float a, float b) { return __fsub_rn(a, b); }

/// The gradient plus weight decay, as Solver::ApplyUpdateOnCpu adds it.
__device__ inline float Regularized(float diff, float data, float decay, bool l1) {
  if (decay == 0.0f) return diff;
  const float term = l1 ? static_cast<float>((data > 0) - (data < 0)) : data;
  return Add(diff, Mul(decay, term));
}

// kernels

/// Grid: x strides over a row's floats, y over the rows. `Rule` computes the
/// step from the regularized gradient at block index i, updating history.
template <typename Rule>
__global__ void FusedUpdateKernel(const UpdateRow* rows, int num_rows, UpdateBlocks blocks,
                                  UpdateConstants constants, Rule rule) {
  for (int r = blockIdx.y; r < num_rows; r += gridDim.y) {
    const UpdateRow row = rows[r];
    for (int64_t k = GridStart(); k < row.count; k += GridStride()) {
      const int64_t i = row.offset + k;
      const float gradient = Regularized(blocks.diff[i], blocks.data[i], row.decay, constants.l1);
      const float step = rule(gradient, i, row.rate, blocks, constants);
      blocks.diff[i] = step;
      blocks.data[i] = Add(blocks.data[i], Mul(-1.0f, step));
    }
  }
}

struct SGDRule {
  __device__ float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                              const UpdateConstants& c) const {
    float* v = b.history[0];
    v[i] = c.momentum == 0.0f ? Mul(rate, g) : Add(Mul(rate, g), Mul(c.momentum, v[i]));
    return v[i];
  }
};

struct NesterovRule {
  __device__ float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                              const UpdateConstants& c) const {
    float* v = b.history[0];
    const float previous = v[i];
    v[i] = Add(Mul(c.momentum, v[i]), Mul(rate, g));
    return Sub(Mul(Add(1.0f, c.momentum), v[i]), Mul(c.momentum, previous));
  }
};

struct AdaGradRule {
  __device__ float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                              const UpdateConstants& c) const {
    float* sum_sq = b.history[0];
    sum_sq[i] = Add(sum_sq[i], Mul(g, g));
    return __fdiv_rn(Mul(rate, g), Add(__fsqrt_rn(sum_sq[i]), c.delta));
  }
};

struct RMSPropRule {
  __device__ float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                              const UpdateConstants& c) const {
    float* mean_sq = b.history[0];
    mean_sq[i] = Add(Mul(c.decay, mean_sq[i]), Mul(Mul(Sub(1.0f, c.decay), g), g));
    return __fdiv_rn(Mul(rate, g), Add(__fsqrt_rn(mean_sq[i]), c.delta));
  }
};

struct AdaDeltaRule {
  __device__ float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                              const UpdateConstants& c) const {
    float* grad_sq = b.history[0];
    float* step_sq = b.history[1];
    const float rho = c.momentum;
    grad_sq[i] = Add(Mul(rho, grad_sq[i]), Mul(Mul(Sub(1.0f, rho), g), g));
    const float step =
        Mul(g, __fsqrt_rn(__fdiv_rn(Add(step_sq[i], c.delta), Add(grad_sq[i], c.delta))));
    step_sq[i] = Add(Mul(rho, step_sq[i]), Mul(Mul(Sub(1.0f, rho), step), step));
    return Mul(rate, step);
  }
};

struct AdamRule {
  __device__ float operator()(float g, int64_t i, float rate, const UpdateBlocks& b,
                              const UpdateConstants& c) const {
    float* m = b.history[0];
    float* v = b.history[1];
    m[i] = Add(Mul(c.momentum, m[i]), Mul(Sub(1.0f, c.momentum), g));
    v[i] = Add(Mul(c.momentum2, v[i]), Mul(Mul(Sub(1.0f, c.momentum2), g), g));
    const float step_rate = Mul(rate, c.correction);
    return __fdiv_rn(Mul(step_rate, m[i]), Add(__fsqrt_rn(v[i]), c.delta));
  }
};

// launchers

template <typename Rule>
void LaunchFusedUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                       const UpdateBlocks& blocks, const UpdateConstants& constants,
                       const char* name) {
  if (num_rows <= 0 || max_count <= 0) return;
  // x: enough blocks for the longest row (others stride less); y: a block
  // row per param, capped at the grid's limit (rows then stride).
  const dim3 grid(CudaBlocks(max_count), static_cast<unsigned int>(std::min(num_rows, 65535)));
  FusedUpdateKernel<<<grid, kCudaThreads, 0, CudaStream()>>>(rows, num_rows, blocks, constants,
                                                             Rule());
  CheckLaunch(name);
}

}  // namespace

void GpuSGDUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                  const UpdateBlocks& blocks, const UpdateConstants& constants) {
  LaunchFusedUpdate<SGDRule>(rows, num_rows, max_count, blocks, constants, "SGD update");
}

void GpuNesterovUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                       const UpdateBlocks& blocks, const UpdateConstants& constants) {
  LaunchFusedUpdate<NesterovRule>(rows, num_rows, max_count, blocks, constants, "Nesterov update");
}

void GpuAdaGradUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                      const UpdateBlocks& blocks, const UpdateConstants& constants) {
  LaunchFusedUpdate<AdaGradRule>(rows, num_rows, max_count, blocks, constants, "AdaGrad update");
}

void GpuRMSPropUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                      const UpdateBlocks& blocks, const UpdateConstants& constants) {
  LaunchFusedUpdate<RMSPropRule>(rows, num_rows, max_count, blocks, constants, "RMSProp update");
}

void GpuAdaDeltaUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                       const UpdateBlocks& blocks, const UpdateConstants& constants) {
  LaunchFusedUpdate<AdaDeltaRule>(rows, num_rows, max_count, blocks, constants, "AdaDelta update");
}

void GpuAdamUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                   const UpdateBlocks& blocks, const UpdateConstants& constants) {
  LaunchFusedUpdate<AdamRule>(rows, num_rows, max_count, blocks, constants, "Adam update");
}

}  // namespace demi
