#ifndef DEMI_LAYERS_LSTM_LAYER_HPP_
#define DEMI_LAYERS_LSTM_LAYER_HPP_

#include <cmath>
#include <cstdint>

#include "demi/layers/recurrent_layer.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// The LSTM cell of unit d of one stream at one step, written once for the
/// host loop and the CUDA kernel: `a` holds the stream's gate
/// pre-activations i', f', o', g' (`hidden` each), which become i, f, o, g;
/// *c = keep f c_prev + i g and *h = o tanh(*c), keep being the stream's cont.
DEMI_HOST_DEVICE inline void LstmCellForward(int64_t hidden, int64_t d, float keep, float* a,
                                             float c_prev, float* c, float* h) {
  const float i = a[d] = 1.0f / (1.0f + expf(-a[d]));
  const float f = a[hidden + d] = 1.0f / (1.0f + expf(-a[hidden + d]));
  const float o = a[2 * hidden + d] = 1.0f / (1.0f + expf(-a[2 * hidden + d]));
  const float g = a[3 * hidden + d] = tanhf(a[3 * hidden + d]);
  const float kept = keep == 0.0f ? 0.0f : keep * f * c_prev;
  *c = kept + i * g;
  *h = o * tanhf(*c);
}

/// Its gradient: `da` (the stream's gate pre-activation gradients, d's
/// entries) from the gate activations `a`, c_prev and c, and dh and *dc, the
/// gradients reaching h and c; *dc becomes c_prev's.
DEMI_HOST_DEVICE inline void LstmCellBackward(int64_t hidden, int64_t d, float keep, const float* a,
                                              float c_prev, float c, float dh, float* dc,
                                              float* da) {
  const float i = a[d], f = a[hidden + d], o = a[2 * hidden + d], g = a[3 * hidden + d];
  const float tanh_c = tanhf(c);
  const float dc_t = *dc + dh * o * (1.0f - tanh_c * tanh_c);
  da[d] = dc_t * g * i * (1.0f - i);
  da[hidden + d] = keep == 0.0f ? 0.0f : dc_t * c_prev * keep * f * (1.0f - f);
  da[2 * hidden + d] = dh * tanh_c * o * (1.0f - o);
  da[3 * hidden + d] = dc_t * i * (1.0f - g * g);
  *dc = keep == 0.0f ? 0.0f : dc_t * keep * f;
}

/// @brief Long short-term memory, as in Caffe's LSTM (without peepholes):
///   [i', f', o', g'] = W_xc x_t + b_c + W_x_static x_static + W_hc (cont_t h_{t-1})
///   i = sigmoid(i'), f = sigmoid(f'), o = sigmoid(o'), g = tanh(g')
///   c_t = cont_t f c_{t-1} + i g
///   h_t = o tanh(c_t)
/// for t = 0 .. T - 1, with h_{-1}, c_{-1} the initial states. Each stream's
/// 4 H gate values lie in the order i, f, o, g. The gradient of f' carries
/// the factor cont_t (Caffe's LSTMUnit leaves it out, which differs only
/// for cont other than 0 and 1).
///
/// Bottoms: x (T x N x ...), cont (T x N), optional x_static (N x ...), and
/// with expose_hidden h_0 then c_0 (1 x N x num_output each). Tops: h
/// (T x N x num_output) and with expose_hidden h_T then c_T (1 x N x
/// num_output each). See RecurrentLayer for cont and the states carried
/// between batches.
///
/// Params, in Caffe's order (H = num_output): W_xc (4H x X), b_c (4H),
/// [W_x_static (4H x S) with x_static], W_hc (4H x H).
///
/// Buffers saved for backward: "gates" (T x N x 4H) holds i, f, o, g;
/// "cells" ((T + 1) x N x H) holds c_{-1} .. c_{T-1}; "initial_hidden"
/// (N x H) holds h_{-1}. Scratch: "gates_diff", "step_rows", and
/// "hidden_diff" and "cell_diff" (N x H each). Backward reads x, cont,
/// x_static and h (for W_hc's gradient), not h_0, c_0, h_T or c_T.
class LSTMLayer : public RecurrentLayer {
 public:
  using RecurrentLayer::RecurrentLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "LSTM"; }

 protected:
  int NumStates() const override { return 2; }
  int64_t GatesPerUnit() const override { return 4; }
  void RecurrentForward(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void RecurrentBackward(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                         const std::vector<Blob*>& bottom) override;

 private:
  /// One step's cells (LstmCellForward) for every stream and unit, on
  /// `device`: a loop on the host, a fused kernel on the GPU.
  void CellsForward(Device device, const float* cont_t, float* gates_t, const float* c_prev,
                    float* c, float* h_t) const;
  /// One step's cells back (LstmCellBackward), likewise.
  void CellsBackward(Device device, const float* cont_t, const float* gates_t, const float* c_prev,
                     const float* c, const float* dh, float* dc, float* dgates_t) const;
#ifndef CPU_ONLY
  /// Their kernels' launchers (lstm_layer.cu).
  void CellsForwardGpu(const float* cont_t, float* gates_t, const float* c_prev, float* c,
                       float* h_t) const;
  void CellsBackwardGpu(const float* cont_t, const float* gates_t, const float* c_prev,
                        const float* c, const float* dh, float* dc, float* dgates_t) const;
#endif

  Blob cells_;           ///< (T + 1) x N x H, saved for backward
  Blob initial_hidden_;  ///< N x H, saved for backward
  Blob hidden_diff_;     ///< N x H: gradient reaching h_{t-1}, scratch
  Blob cell_diff_;       ///< N x H: gradient reaching c_{t-1}, scratch
};

}  // namespace demi

#endif  // DEMI_LAYERS_LSTM_LAYER_HPP_
