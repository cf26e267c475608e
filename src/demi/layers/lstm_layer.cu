#include "demi/layers/lstm_layer.hpp"
#include "demi/util/cuda_kernel.cuh"

namespace demi {

namespace {

// kernels

/// One step for every (stream n, unit d), i = n * hidden + d: LstmCellForward.
__global__ void LstmStepForwardKernel(int64_t count, int64_t hidden, const float* cont_t,
                                      float* gates_t, const float* c_prev, float* c, float* h_t) {
  for (int64_t i = GridStart(); i < count; i += GridStride()) {
    const int64_t n = i / hidden, d = i % hidden;
    LstmCellForward(hidden, d, cont_t[n], gates_t + n * 4 * hidden, c_prev[i], c + i, h_t + i);
  }
}

/// One step back for every (n, d): LstmCellBackward.
__global__ void LstmStepBackwardKernel(int64_t count, int64_t hidden, const float* cont_t,
                                       const float* gates_t, const float* c_prev, const float* c,
                                       const float* dh, float* dc, float* dgates_t) {
  for (int64_t i = GridStart(); i < count; i += GridStride()) {
    const int64_t n = i / hidden, d = i % hidden;
    LstmCellBackward(hidden, d, cont_t[n], gates_t + n * 4 * hidden, c_prev[i], c[i], dh[i], dc + i,
                     dgates_t + n * 4 * hidden);
  }
}

}  // namespace

// launchers

void LSTMLayer::CellsForwardGpu(const float* cont_t, float* gates_t, const float* c_prev, float* c,
                                float* h_t) const {
  const int64_t step_size = streams_ * hidden_;
  if (step_size == 0) return;
  Launch("LstmStepForwardKernel", CudaBlocks(step_size), LstmStepForwardKernel, step_size, hidden_,
         cont_t, gates_t, c_prev, c, h_t);
}

void LSTMLayer::CellsBackwardGpu(const float* cont_t, const float* gates_t, const float* c_prev,
                                 const float* c, const float* dh, float* dc,
                                 float* dgates_t) const {
  const int64_t step_size = streams_ * hidden_;
  if (step_size == 0) return;
  Launch("LstmStepBackwardKernel", CudaBlocks(step_size), LstmStepBackwardKernel, step_size,
         hidden_, cont_t, gates_t, c_prev, c, dh, dc, dgates_t);
}

}  // namespace demi
