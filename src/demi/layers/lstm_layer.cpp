#include "demi/layers/lstm_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void LSTMLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  RecurrentLayer::LayerSetUp(bottom, top);
  RegisterBuffer("cells", &cells_, BufferLifetime::kSavedForBackward);
  RegisterBuffer("initial_hidden", &initial_hidden_, BufferLifetime::kSavedForBackward);
  RegisterBuffer("hidden_diff", &hidden_diff_, BufferLifetime::kScratch);
  RegisterBuffer("cell_diff", &cell_diff_, BufferLifetime::kScratch);
}

void LSTMLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  RecurrentLayer::Reshape(bottom, top);
  cells_.Reshape(std::vector<int64_t>{steps_ + 1, streams_, hidden_});
  initial_hidden_.Reshape(std::vector<int64_t>{streams_, hidden_});
  hidden_diff_.ReshapeLike(initial_hidden_);
  cell_diff_.ReshapeLike(initial_hidden_);
}

void LSTMLayer::RecurrentForward(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Device device = context_.device;
  const int64_t step_size = streams_ * hidden_;
  const float* cont = bottom[1]->data_on(device);
  const float* w_hc = blobs_[w_h_param_]->data_on(device);
  float* gates = gates_.mutable_data_on(device);
  float* cells = cells_.mutable_data_on(device);
  float* h = top[0]->mutable_data_on(device);
  float* conted = step_rows_.mutable_data_on(device);
  Copy(device, step_size, InitialState(bottom, 0), initial_hidden_.mutable_data_on(device));
  Copy(device, step_size, InitialState(bottom, 1), cells);
  for (int64_t t = 0; t < steps_; ++t) {
    const float* cont_t = cont + t * streams_;
    const float* h_prev = t == 0 ? initial_hidden_.data_on(device) : h + (t - 1) * step_size;
    float* gates_t = gates + t * streams_ * gates_dim_;
    ScaleRows(device, streams_, hidden_, cont_t, h_prev, conted);
    Gemm(device, false, true, streams_, gates_dim_, hidden_, 1.0f, conted, w_hc, 1.0f, gates_t);
    CellsForward(device, cont_t, gates_t, cells + t * step_size, cells + (t + 1) * step_size,
                 h + t * step_size);
  }
  SaveFinalState(top, 0, h + (steps_ - 1) * step_size);
  SaveFinalState(top, 1, cells + steps_ * step_size);
}

void LSTMLayer::RecurrentBackward(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  const Device device = context_.device;
  const int64_t step_size = streams_ * hidden_;
  const float* cont = bottom[1]->data_on(device);
  const float* w_hc = blobs_[w_h_param_]->data_on(device);
  const float* gates = gates_.data_on(device);
  const float* cells = cells_.data_on(device);
  const float* h = top[0]->data_on(device);
  const float* dh_out = top[0]->diff_on(device);
  float* dgates = dgates_.mutable_data_on(device);
  float* dh = hidden_diff_.mutable_data_on(device);  // reaching h_t from later steps
  float* dc = cell_diff_.mutable_data_on(device);    // reaching c_t from later steps
  float* conted_diff = step_rows_.mutable_data_on(device);
  if (expose_hidden_) {
    Copy(device, step_size, top[1]->diff_on(device), dh);
    Copy(device, step_size, top[2]->diff_on(device), dc);
  } else {
    Set(device, step_size, 0.0f, dh);
    Set(device, step_size, 0.0f, dc);
  }
  for (int64_t t = steps_ - 1; t >= 0; --t) {
    const float* cont_t = cont + t * streams_;
    const int64_t gate_offset = t * streams_ * gates_dim_;
    Axpy(device, step_size, 1.0f, dh_out + t * step_size, dh);
    CellsBackward(device, cont_t, gates + gate_offset, cells + t * step_size,
                  cells + (t + 1) * step_size, dh, dc, dgates + gate_offset);
    // The gates depended on cont_t h_{t-1} through W_hc.
    ScaleRows(device, streams_, gates_dim_, cont_t, dgates + gate_offset, conted_diff);
    const float* h_prev = t == 0 ? initial_hidden_.data_on(device) : h + (t - 1) * step_size;
    if (param_propagate_down(w_h_param_)) {
      Gemm(device, true, false, gates_dim_, hidden_, streams_, 1.0f, conted_diff, h_prev, 1.0f,
           blobs_[w_h_param_]->mutable_diff_on(device));
    }
    Gemm(device, false, false, streams_, hidden_, gates_dim_, 1.0f, conted_diff, w_hc, 0.0f, dh);
  }
  if (expose_hidden_) {
    if (propagate_down[first_state_bottom_]) {
      Copy(device, step_size, dh, bottom[first_state_bottom_]->mutable_diff_on(device));
    }
    if (propagate_down[first_state_bottom_ + 1]) {
      Copy(device, step_size, dc, bottom[first_state_bottom_ + 1]->mutable_diff_on(device));
    }
  }
}

void LSTMLayer::CellsForward(Device device, const float* cont_t, float* gates_t,
                             const float* c_prev, float* c, float* h_t) const {
#ifndef CPU_ONLY
  if (device == Device::kGPU) return CellsForwardGpu(cont_t, gates_t, c_prev, c, h_t);
#endif
  for (int64_t n = 0; n < streams_; ++n) {
    float* a = gates_t + n * gates_dim_;  // i, f, o, g of stream n
    for (int64_t d = 0, i = n * hidden_; d < hidden_; ++d, ++i) {
      LstmCellForward(hidden_, d, cont_t[n], a, c_prev[i], c + i, h_t + i);
    }
  }
}

void LSTMLayer::CellsBackward(Device device, const float* cont_t, const float* gates_t,
                              const float* c_prev, const float* c, const float* dh, float* dc,
                              float* dgates_t) const {
#ifndef CPU_ONLY
  if (device == Device::kGPU) return CellsBackwardGpu(cont_t, gates_t, c_prev, c, dh, dc, dgates_t);
#endif
  for (int64_t n = 0; n < streams_; ++n) {
    const float* a = gates_t + n * gates_dim_;
    float* da = dgates_t + n * gates_dim_;
    for (int64_t d = 0, i = n * hidden_; d < hidden_; ++d, ++i) {
      LstmCellBackward(hidden_, d, cont_t[n], a, c_prev[i], c[i], dh[i], dc + i, da);
    }
  }
}

DEMI_REGISTER_LAYER(LSTM);

}  // namespace demi
