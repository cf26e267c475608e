#ifndef DEMI_SOLVERS_UPDATE_KERNELS_HPP_
#define DEMI_SOLVERS_UPDATE_KERNELS_HPP_

// What one pass of a solver's update sees: a table with a row per learnable
// param (its floats in the param block, its rate and its decay) and the
// blocks the pass reads and writes. Each float goes through UpdateFloat:
// regularize the gradient, compute the step with the solver's rule (updating
// the history), store the step in diff, subtract it from data. The rules
// (solvers/*.hpp) are written once for both sides: the host pass is
// RuleSolver's loop (solver.hpp), the GPU pass GpuUpdate below
// (update_kernels.cu), a fused kernel per rule.
//
// Their arithmetic goes through the *Rn functions below: the round-to-nearest
// intrinsics on the device, which nvcc never fuses into a multiply-add, and
// the plain operators on the host (built with -ffp-contract=off). Each float
// then sees the same operations in the same order on both, sqrt and division
// being IEEE-rounded on both, and the GPU's results are the CPU's bit for bit.

#include <cmath>
#include <cstdint>

#include "demi/util/host_device.hpp"

namespace demi {

/// One learnable param: floats [offset, offset + count) of every block,
/// rate = the solver's rate times lr_mult, decay = weight_decay times
/// decay_mult (0: no regularization).
struct UpdateRow {
  int64_t offset = 0;
  int64_t count = 0;
  float rate = 0;
  float decay = 0;
};

/// The blocks of one update pass; history[s] is set s (as many as the rule
/// keeps), laid out like the params.
struct UpdateBlocks {
  float* data = nullptr;
  float* diff = nullptr;
  float* history[2] = {nullptr, nullptr};
};

/// The rule's constants: SGD and Nesterov read momentum; AdaGrad delta;
/// RMSProp decay (rms_decay) and delta; AdaDelta momentum (its rho) and
/// delta; Adam momentum (beta1), momentum2 (beta2), delta (eps) and
/// correction (sqrt(1 - beta2^t) / (1 - beta1^t), multiplied into the rate).
struct UpdateConstants {
  bool l1 = false;  ///< L1 regularization (else L2)
  float momentum = 0;
  float momentum2 = 0;
  float decay = 0;
  float delta = 0;
  float correction = 1;
};

/// The update rules, one per solver (solvers/*.hpp); the GPU pass runs the
/// kernel of the rule it is given.
enum class UpdateRule { kSGD, kNesterov, kAdaGrad, kRMSProp, kAdaDelta, kAdam };

/// How many history sets `rule` keeps: AdaDelta and Adam two, the others one.
inline int HistorySets(UpdateRule rule) {
  return rule == UpdateRule::kAdaDelta || rule == UpdateRule::kAdam ? 2 : 1;
}

// DEMI_RN(device, host): the device pass of nvcc compiles the first, the
// host compilers the second.
#ifdef __CUDA_ARCH__
#define DEMI_RN(device, host) device
#else
#define DEMI_RN(device, host) host
#endif

DEMI_HOST_DEVICE inline float AddRn(float a, float b) { return DEMI_RN(__fadd_rn(a, b), a + b); }
DEMI_HOST_DEVICE inline float SubRn(float a, float b) { return DEMI_RN(__fsub_rn(a, b), a - b); }
DEMI_HOST_DEVICE inline float MulRn(float a, float b) { return DEMI_RN(__fmul_rn(a, b), a * b); }
DEMI_HOST_DEVICE inline float DivRn(float a, float b) { return DEMI_RN(__fdiv_rn(a, b), a / b); }
DEMI_HOST_DEVICE inline float SqrtRn(float a) { return DEMI_RN(__fsqrt_rn(a), std::sqrt(a)); }

#undef DEMI_RN

/// The gradient plus weight decay (L2: decay * data; L1: decay * sign(data)).
DEMI_HOST_DEVICE inline float Regularized(float diff, float data, float decay, bool l1) {
  if (decay == 0.0f) return diff;
  const float term = l1 ? static_cast<float>((data > 0) - (data < 0)) : data;
  return AddRn(diff, MulRn(decay, term));
}

/// Float `i` of `row` through the update: `rule` turns its regularized
/// gradient into the step (updating the history), which replaces the
/// gradient in diff and is subtracted from data.
template <typename Rule>
DEMI_HOST_DEVICE inline void UpdateFloat(const Rule& rule, int64_t i, const UpdateRow& row,
                                         const UpdateBlocks& blocks,
                                         const UpdateConstants& constants) {
  const float gradient = Regularized(blocks.diff[i], blocks.data[i], row.decay, constants.l1);
  const float step = rule(gradient, i, row.rate, blocks, constants);
  blocks.diff[i] = step;
  blocks.data[i] = AddRn(blocks.data[i], MulRn(-1.0f, step));
}

#ifndef CPU_ONLY
/// The fused update of `rule` over `rows` (`num_rows` rows in device
/// memory, the longest `max_count` floats); the blocks: device pointers.
void GpuUpdate(UpdateRule rule, const UpdateRow* rows, int num_rows, int64_t max_count,
               const UpdateBlocks& blocks, const UpdateConstants& constants);
#endif  // CPU_ONLY

}  // namespace demi

#endif  // DEMI_SOLVERS_UPDATE_KERNELS_HPP_
