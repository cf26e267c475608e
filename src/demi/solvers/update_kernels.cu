// The fused update on the GPU: a kernel per rule over the table of rows, each
// float taken through UpdateFloat with the rule (solvers/update_kernels.hpp
// says how the results match the host's bit for bit). GpuUpdate launches the
// kernel of the rule it is given.
#include <algorithm>

#include "demi/solvers/adadelta.hpp"
#include "demi/solvers/adagrad.hpp"
#include "demi/solvers/adam.hpp"
#include "demi/solvers/nesterov.hpp"
#include "demi/solvers/rmsprop.hpp"
#include "demi/solvers/sgd.hpp"
#include "demi/solvers/update_kernels.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// Grid: x strides over a row's floats, y over the rows.
template <typename Rule>
__global__ void FusedUpdateKernel(const UpdateRow* rows, int num_rows, UpdateBlocks blocks,
                                  UpdateConstants constants, Rule rule) {
  for (int r = blockIdx.y; r < num_rows; r += gridDim.y) {
    const UpdateRow row = rows[r];
    for (int64_t k = GridStart(); k < row.count; k += GridStride()) {
      UpdateFloat(rule, row.offset + k, row, blocks, constants);
    }
  }
}

// launchers

/// Grid: x enough blocks for the longest row (others stride less), y a block
/// row per param, capped at the grid's limit (rows then stride).
template <typename Rule>
void LaunchFusedUpdate(const char* name, const UpdateRow* rows, int num_rows, int64_t max_count,
                       const UpdateBlocks& blocks, const UpdateConstants& constants) {
  const dim3 grid(CudaBlocks(max_count), static_cast<unsigned int>(std::min(num_rows, 65535)));
  FusedUpdateKernel<<<grid, kCudaThreads, 0, CudaStream()>>>(rows, num_rows, blocks, constants,
                                                             Rule());
  CheckLaunch(name);
}

/// The kernel of each rule, under the name its launch is checked with.
struct RuleLauncher {
  UpdateRule rule;
  const char* name;
  void (*launch)(const char* name, const UpdateRow* rows, int num_rows, int64_t max_count,
                 const UpdateBlocks& blocks, const UpdateConstants& constants);
};

constexpr RuleLauncher kRuleLaunchers[] = {
    {UpdateRule::kSGD, "SGD update", LaunchFusedUpdate<SGDRule>},
    {UpdateRule::kNesterov, "Nesterov update", LaunchFusedUpdate<NesterovRule>},
    {UpdateRule::kAdaGrad, "AdaGrad update", LaunchFusedUpdate<AdaGradRule>},
    {UpdateRule::kRMSProp, "RMSProp update", LaunchFusedUpdate<RMSPropRule>},
    {UpdateRule::kAdaDelta, "AdaDelta update", LaunchFusedUpdate<AdaDeltaRule>},
    {UpdateRule::kAdam, "Adam update", LaunchFusedUpdate<AdamRule>},
};

}  // namespace

void GpuUpdate(UpdateRule rule, const UpdateRow* rows, int num_rows, int64_t max_count,
               const UpdateBlocks& blocks, const UpdateConstants& constants) {
  if (num_rows <= 0 || max_count <= 0) return;
  for (const RuleLauncher& launcher : kRuleLaunchers) {
    if (launcher.rule == rule) {
      launcher.launch(launcher.name, rows, num_rows, max_count, blocks, constants);
      return;
    }
  }
  LOG(FATAL) << "no GPU kernel for update rule " << static_cast<int>(rule);
}

}  // namespace demi
