#include "demi/layers/rnn_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void RNNLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  RecurrentLayer::LayerSetUp(bottom, top);
  RegisterBuffer("initial_hidden", &initial_hidden_, BufferLifetime::kSavedForBackward);
  RegisterBuffer("output_diff", &output_diff_, BufferLifetime::kScratch);
}

void RNNLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  RecurrentLayer::Reshape(bottom, top);
  initial_hidden_.Reshape(std::vector<int64_t>{streams_, hidden_});
  output_diff_.ReshapeLike(gates_);
}

void RNNLayer::RecurrentForward(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Device device = context_.device;
  const int64_t step_size = streams_ * hidden_;
  const float* cont = bottom[1]->data_on(device);
  const float* w_hh = blobs_[w_h_param_]->data_on(device);
  float* h = gates_.mutable_data_on(device);  // pre-activations in, h_t out
  float* conted = step_rows_.mutable_data_on(device);
  Copy(device, step_size, InitialState(bottom, 0), initial_hidden_.mutable_data_on(device));
  for (int64_t t = 0; t < steps_; ++t) {
    const float* h_prev = t == 0 ? initial_hidden_.data_on(device) : h + (t - 1) * step_size;
    float* h_t = h + t * step_size;
    ScaleRows(device, streams_, hidden_, cont + t * streams_, h_prev, conted);
    Gemm(device, false, true, streams_, hidden_, hidden_, 1.0f, conted, w_hh, 1.0f, h_t);
    Tanh(device, step_size, h_t, h_t);
  }
  SaveFinalState(top, 0, h + (steps_ - 1) * step_size);

  const int64_t rows = steps_ * streams_;
  float* o = top[0]->mutable_data_on(device);
  Gemm(device, false, true, rows, hidden_, hidden_, 1.0f, h,
       blobs_[w_h_param_ + 1]->data_on(device), 0.0f, o);
  AddToRows(device, rows, hidden_, blobs_[w_h_param_ + 2]->data_on(device), o);
  Tanh(device, rows * hidden_, o, o);
}

void RNNLayer::RecurrentBackward(const std::vector<Blob*>& top,
                                 const std::vector<bool>& propagate_down,
                                 const std::vector<Blob*>& bottom) {
  const Device device = context_.device;
  const int64_t rows = steps_ * streams_;
  const int64_t step_size = streams_ * hidden_;
  const float* h = gates_.data_on(device);
  const int w_ho = w_h_param_ + 1, b_o = w_h_param_ + 2;
  // Output: d(W_ho h + b_o) = do (1 - o^2).
  float* d_pre_o = output_diff_.mutable_data_on(device);
  TanhGradient(device, rows * hidden_, top[0]->data_on(device), top[0]->diff_on(device), d_pre_o);
  if (param_propagate_down(w_ho)) {
    Gemm(device, true, false, hidden_, hidden_, rows, 1.0f, d_pre_o, h, 1.0f,
         blobs_[w_ho]->mutable_diff_on(device));
  }
  if (param_propagate_down(b_o))
    SumRows(device, rows, hidden_, d_pre_o, blobs_[b_o]->mutable_diff_on(device));
  // dh_t from the output, then back through time; dgates_ ends as d(pre-activation).
  float* dh = dgates_.mutable_data_on(device);
  Gemm(device, false, false, rows, hidden_, hidden_, 1.0f, d_pre_o, blobs_[w_ho]->data_on(device),
       0.0f, dh);
  if (expose_hidden_) {
    Axpy(device, step_size, 1.0f, top[1]->diff_on(device), dh + (steps_ - 1) * step_size);
  }
  const float* cont = bottom[1]->data_on(device);
  const float* w_hh = blobs_[w_h_param_]->data_on(device);
  float* conted_diff = step_rows_.mutable_data_on(device);
  const int h0_bottom = first_state_bottom_;
  for (int64_t t = steps_ - 1; t >= 0; --t) {
    float* dh_t = dh + t * step_size;
    TanhGradient(device, step_size, h + t * step_size, dh_t, dh_t);
    // h_t depended on cont_t h_{t-1} through W_hh.
    ScaleRows(device, streams_, hidden_, cont + t * streams_, dh_t, conted_diff);
    const float* h_prev = t == 0 ? initial_hidden_.data_on(device) : h + (t - 1) * step_size;
    if (param_propagate_down(w_h_param_)) {
      Gemm(device, true, false, hidden_, hidden_, streams_, 1.0f, conted_diff, h_prev, 1.0f,
           blobs_[w_h_param_]->mutable_diff_on(device));
    }
    if (t > 0) {
      Gemm(device, false, false, streams_, hidden_, hidden_, 1.0f, conted_diff, w_hh, 1.0f,
           dh + (t - 1) * step_size);
    } else if (expose_hidden_ && propagate_down[h0_bottom]) {
      Gemm(device, false, false, streams_, hidden_, hidden_, 1.0f, conted_diff, w_hh, 0.0f,
           bottom[h0_bottom]->mutable_diff_on(device));
    }
  }
}

DEMI_REGISTER_LAYER(RNN);

}  // namespace demi
