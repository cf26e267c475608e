#include "demi/layers/lstm_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

namespace {

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

}  // namespace

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
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) return RecurrentForward_gpu(bottom, top);
#endif
  RecurrentForward_cpu(bottom, top);
}

void LSTMLayer::RecurrentBackward(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) return RecurrentBackward_gpu(top, propagate_down, bottom);
#endif
  RecurrentBackward_cpu(top, propagate_down, bottom);
}

void LSTMLayer::RecurrentForward_cpu(const std::vector<Blob*>& bottom,
                                     const std::vector<Blob*>& top) {
  const int64_t step_size = streams_ * hidden_;
  const float* cont = bottom[1]->cpu_data();
  const float* w_hc = blobs_[w_h_param_]->cpu_data();
  float* gates = gates_.mutable_cpu_data();
  float* cells = cells_.mutable_cpu_data();
  float* h = top[0]->mutable_cpu_data();
  float* conted = step_rows_.mutable_cpu_data();
  Copy(step_size, InitialState(bottom, 0), initial_hidden_.mutable_cpu_data());
  Copy(step_size, InitialState(bottom, 1), cells);
  for (int64_t t = 0; t < steps_; ++t) {
    const float* cont_t = cont + t * streams_;
    const float* h_prev = t == 0 ? initial_hidden_.cpu_data() : h + (t - 1) * step_size;
    float* gates_t = gates + t * streams_ * gates_dim_;
    ScaleRows(streams_, hidden_, cont_t, h_prev, conted);
    Gemm(false, true, streams_, gates_dim_, hidden_, 1.0f, conted, w_hc, 1.0f, gates_t);
    for (int64_t n = 0; n < streams_; ++n) {
      float* a = gates_t + n * gates_dim_;  // i, f, o, g of stream n
      const float* c_prev = cells + t * step_size + n * hidden_;
      float* c = cells + (t + 1) * step_size + n * hidden_;
      float* h_t = h + t * step_size + n * hidden_;
      for (int64_t d = 0; d < hidden_; ++d) {
        const float i = a[d] = Sigmoid(a[d]);
        const float f = a[hidden_ + d] = Sigmoid(a[hidden_ + d]);
        const float o = a[2 * hidden_ + d] = Sigmoid(a[2 * hidden_ + d]);
        const float g = a[3 * hidden_ + d] = std::tanh(a[3 * hidden_ + d]);
        const float kept = cont_t[n] == 0.0f ? 0.0f : cont_t[n] * f * c_prev[d];
        c[d] = kept + i * g;
        h_t[d] = o * std::tanh(c[d]);
      }
    }
  }
  SaveFinalState(top, 0, h + (steps_ - 1) * step_size);
  SaveFinalState(top, 1, cells + steps_ * step_size);
}

void LSTMLayer::RecurrentBackward_cpu(const std::vector<Blob*>& top,
                                      const std::vector<bool>& propagate_down,
                                      const std::vector<Blob*>& bottom) {
  const int64_t step_size = streams_ * hidden_;
  const float* cont = bottom[1]->cpu_data();
  const float* w_hc = blobs_[w_h_param_]->cpu_data();
  const float* gates = gates_.cpu_data();
  const float* cells = cells_.cpu_data();
  const float* h = top[0]->cpu_data();
  const float* dh_out = top[0]->cpu_diff();
  float* dgates = dgates_.mutable_cpu_data();
  float* dh = hidden_diff_.mutable_cpu_data();  // reaching h_t from later steps
  float* dc = cell_diff_.mutable_cpu_data();    // reaching c_t from later steps
  float* conted_diff = step_rows_.mutable_cpu_data();
  if (expose_hidden_) {
    Copy(step_size, top[1]->cpu_diff(), dh);
    Copy(step_size, top[2]->cpu_diff(), dc);
  } else {
    Set(step_size, 0.0f, dh);
    Set(step_size, 0.0f, dc);
  }
  for (int64_t t = steps_ - 1; t >= 0; --t) {
    const float* cont_t = cont + t * streams_;
    Axpy(step_size, 1.0f, dh_out + t * step_size, dh);
    for (int64_t n = 0; n < streams_; ++n) {
      const float* a = gates + (t * streams_ + n) * gates_dim_;
      float* da = dgates + (t * streams_ + n) * gates_dim_;
      const float* c_prev = cells + t * step_size + n * hidden_;
      const float* c = cells + (t + 1) * step_size + n * hidden_;
      float* dh_n = dh + n * hidden_;
      float* dc_n = dc + n * hidden_;
      const float keep = cont_t[n];
      for (int64_t d = 0; d < hidden_; ++d) {
        const float i = a[d], f = a[hidden_ + d], o = a[2 * hidden_ + d], g = a[3 * hidden_ + d];
        const float tanh_c = std::tanh(c[d]);
        const float dc_t = dc_n[d] + dh_n[d] * o * (1.0f - tanh_c * tanh_c);
        da[d] = dc_t * g * i * (1.0f - i);
        da[hidden_ + d] = keep == 0.0f ? 0.0f : dc_t * c_prev[d] * keep * f * (1.0f - f);
        da[2 * hidden_ + d] = dh_n[d] * tanh_c * o * (1.0f - o);
        da[3 * hidden_ + d] = dc_t * i * (1.0f - g * g);
        dc_n[d] = keep == 0.0f ? 0.0f : dc_t * keep * f;
      }
    }
    // The gates depended on cont_t h_{t-1} through W_hc.
    const float* dgates_t = dgates + t * streams_ * gates_dim_;
    ScaleRows(streams_, gates_dim_, cont_t, dgates_t, conted_diff);
    const float* h_prev = t == 0 ? initial_hidden_.cpu_data() : h + (t - 1) * step_size;
    if (param_propagate_down(w_h_param_)) {
      Gemm(true, false, gates_dim_, hidden_, streams_, 1.0f, conted_diff, h_prev, 1.0f,
           blobs_[w_h_param_]->mutable_cpu_diff());
    }
    Gemm(false, false, streams_, hidden_, gates_dim_, 1.0f, conted_diff, w_hc, 0.0f, dh);
  }
  if (expose_hidden_) {
    if (propagate_down[first_state_bottom_]) {
      Copy(step_size, dh, bottom[first_state_bottom_]->mutable_cpu_diff());
    }
    if (propagate_down[first_state_bottom_ + 1]) {
      Copy(step_size, dc, bottom[first_state_bottom_ + 1]->mutable_cpu_diff());
    }
  }
}

DEMI_REGISTER_LAYER(LSTM);

}  // namespace demi
