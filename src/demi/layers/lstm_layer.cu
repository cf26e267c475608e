#include "demi/layers/lstm_layer.hpp"
#include "demi/util/cuda_kernel.cuh"
#include "demi/util/math_gpu.hpp"

namespace demi {

namespace {

// kernels

__device__ inline float SigmoidOf(float x) { return 1.0f / (1.0f + expf(-x)); }

/// One step for every (stream n, unit d), i = n * hidden + d: turns the gate
/// pre-activations of step t into i, f, o, g in place and writes c_t and h_t.
__global__ void LstmStepForwardKernel(int64_t count, int64_t hidden, const float* cont_t,
                                      float* gates_t, const float* c_prev, float* c, float* h_t) {
  for (int64_t i = GridStart(); i < count; i += GridStride()) {
    const int64_t n = i / hidden, d = i % hidden;
    float* a = gates_t + n * 4 * hidden;  // i, f, o, g of stream n
    const float in = a[d] = SigmoidOf(a[d]);
    const float forget = a[hidden + d] = SigmoidOf(a[hidden + d]);
    const float out = a[2 * hidden + d] = SigmoidOf(a[2 * hidden + d]);
    const float g = a[3 * hidden + d] = tanhf(a[3 * hidden + d]);
    const float kept = cont_t[n] == 0.0f ? 0.0f : cont_t[n] * forget * c_prev[i];
    c[i] = kept + in * g;
    h_t[i] = out * tanhf(c[i]);
  }
}

/// One step back for every (n, d): the gate gradients of step t from dh and
/// dc (the gradients reaching h_t and c_t), and dc becomes c_{t-1}'s.
__global__ void LstmStepBackwardKernel(int64_t count, int64_t hidden, const float* cont_t,
                                       const float* gates_t, const float* c_prev, const float* c,
                                       const float* dh, float* dc, float* dgates_t) {
  for (int64_t i = GridStart(); i < count; i += GridStride()) {
    const int64_t n = i / hidden, d = i % hidden;
    const float* a = gates_t + n * 4 * hidden;
    float* da = dgates_t + n * 4 * hidden;
    const float in = a[d], forget = a[hidden + d], out = a[2 * hidden + d], g = a[3 * hidden + d];
    const float keep = cont_t[n];
    const float tanh_c = tanhf(c[i]);
    const float dc_t = dc[i] + dh[i] * out * (1.0f - tanh_c * tanh_c);
    da[d] = dc_t * g * in * (1.0f - in);
    da[hidden + d] = keep == 0.0f ? 0.0f : dc_t * c_prev[i] * keep * forget * (1.0f - forget);
    da[2 * hidden + d] = dh[i] * tanh_c * out * (1.0f - out);
    da[3 * hidden + d] = dc_t * in * (1.0f - g * g);
    dc[i] = keep == 0.0f ? 0.0f : dc_t * keep * forget;
  }
}

}  // namespace

// launchers

void LSTMLayer::RecurrentForward_gpu(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  const int64_t step_size = streams_ * hidden_;
  const float* cont = bottom[1]->gpu_data();
  const float* w_hc = blobs_[w_h_param_]->gpu_data();
  float* gates = gates_.mutable_gpu_data();
  float* cells = cells_.mutable_gpu_data();
  float* h = top[0]->mutable_gpu_data();
  float* conted = step_rows_.mutable_gpu_data();
  GpuCopy(step_size, InitialState(bottom, 0), initial_hidden_.mutable_gpu_data());
  GpuCopy(step_size, InitialState(bottom, 1), cells);
  for (int64_t t = 0; t < steps_; ++t) {
    const float* cont_t = cont + t * streams_;
    const float* h_prev = t == 0 ? initial_hidden_.gpu_data() : h + (t - 1) * step_size;
    float* gates_t = gates + t * streams_ * gates_dim_;
    GpuScaleRows(streams_, hidden_, cont_t, h_prev, conted);
    GpuGemm(false, true, streams_, gates_dim_, hidden_, 1.0f, conted, w_hc, 1.0f, gates_t);
    if (step_size == 0) continue;
    LstmStepForwardKernel<<<CudaBlocks(step_size), kCudaThreads, 0, CudaStream()>>>(
        step_size, hidden_, cont_t, gates_t, cells + t * step_size, cells + (t + 1) * step_size,
        h + t * step_size);
    CheckLaunch("LstmStepForwardKernel");
  }
  SaveFinalState(top, 0, h + (steps_ - 1) * step_size);
  SaveFinalState(top, 1, cells + steps_ * step_size);
}

void LSTMLayer::RecurrentBackward_gpu(const std::vector<Blob*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob*>& bottom) {
  const int64_t step_size = streams_ * hidden_;
  const float* cont = bottom[1]->gpu_data();
  const float* w_hc = blobs_[w_h_param_]->gpu_data();
  const float* gates = gates_.gpu_data();
  const float* cells = cells_.gpu_data();
  const float* h = top[0]->gpu_data();
  const float* dh_out = top[0]->gpu_diff();
  float* dgates = dgates_.mutable_gpu_data();
  float* dh = hidden_diff_.mutable_gpu_data();  // reaching h_t from later steps
  float* dc = cell_diff_.mutable_gpu_data();    // reaching c_t from later steps
  float* conted_diff = step_rows_.mutable_gpu_data();
  if (expose_hidden_) {
    GpuCopy(step_size, top[1]->gpu_diff(), dh);
    GpuCopy(step_size, top[2]->gpu_diff(), dc);
  } else {
    GpuSet(step_size, 0.0f, dh);
    GpuSet(step_size, 0.0f, dc);
  }
  for (int64_t t = steps_ - 1; t >= 0; --t) {
    const float* cont_t = cont + t * streams_;
    const int64_t gate_offset = t * streams_ * gates_dim_;
    GpuAxpy(step_size, 1.0f, dh_out + t * step_size, dh);
    if (step_size > 0) {
      LstmStepBackwardKernel<<<CudaBlocks(step_size), kCudaThreads, 0, CudaStream()>>>(
          step_size, hidden_, cont_t, gates + gate_offset, cells + t * step_size,
          cells + (t + 1) * step_size, dh, dc, dgates + gate_offset);
      CheckLaunch("LstmStepBackwardKernel");
    }
    // The gates depended on cont_t h_{t-1} through W_hc.
    GpuScaleRows(streams_, gates_dim_, cont_t, dgates + gate_offset, conted_diff);
    const float* h_prev = t == 0 ? initial_hidden_.gpu_data() : h + (t - 1) * step_size;
    if (param_propagate_down(w_h_param_)) {
      GpuGemm(true, false, gates_dim_, hidden_, streams_, 1.0f, conted_diff, h_prev, 1.0f,
              blobs_[w_h_param_]->mutable_gpu_diff());
    }
    GpuGemm(false, false, streams_, hidden_, gates_dim_, 1.0f, conted_diff, w_hc, 0.0f, dh);
  }
  if (expose_hidden_) {
    if (propagate_down[first_state_bottom_]) {
      GpuCopy(step_size, dh, bottom[first_state_bottom_]->mutable_gpu_diff());
    }
    if (propagate_down[first_state_bottom_ + 1]) {
      GpuCopy(step_size, dc, bottom[first_state_bottom_ + 1]->mutable_gpu_diff());
    }
  }
}

}  // namespace demi
