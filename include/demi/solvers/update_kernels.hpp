#ifndef DEMI_SOLVERS_UPDATE_KERNELS_HPP_
#define DEMI_SOLVERS_UPDATE_KERNELS_HPP_

// What one pass of a solver's update sees: a table with a row per learnable
// param (its floats in the param block, its rate and its decay) and the
// blocks the pass reads and writes. The CPU passes are the solvers' own
// ComputeUpdateValue; the GPU passes are the fused kernels below
// (update_kernels.cu), one per update rule, each doing for every float of
// every row: regularize the gradient, compute the step (updating the
// history), store the step in diff, subtract it from data.

#include <cstdint>

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

#ifndef CPU_ONLY
/// `rows`: `num_rows` rows in device memory; the blocks: device pointers.
void GpuSGDUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                  const UpdateBlocks& blocks, const UpdateConstants& constants);
void GpuNesterovUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                       const UpdateBlocks& blocks, const UpdateConstants& constants);
void GpuAdaGradUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                      const UpdateBlocks& blocks, const UpdateConstants& constants);
void GpuRMSPropUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                      const UpdateBlocks& blocks, const UpdateConstants& constants);
void GpuAdaDeltaUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                       const UpdateBlocks& blocks, const UpdateConstants& constants);
void GpuAdamUpdate(const UpdateRow* rows, int num_rows, int64_t max_count,
                   const UpdateBlocks& blocks, const UpdateConstants& constants);
#endif  // CPU_ONLY

}  // namespace demi

#endif  // DEMI_SOLVERS_UPDATE_KERNELS_HPP_
