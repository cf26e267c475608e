#ifndef DEMI_LAYERS_LSTM_LAYER_HPP_
#define DEMI_LAYERS_LSTM_LAYER_HPP_

#include "demi/layers/recurrent_layer.hpp"

namespace demi {

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
  /// The step runs a fused kernel on the GPU: these pick the twin below.
  void RecurrentForward(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void RecurrentBackward(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                         const std::vector<Blob*>& bottom) override;

 private:
  void RecurrentForward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top);
  void RecurrentBackward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom);
#ifndef CPU_ONLY
  void RecurrentForward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top);
  void RecurrentBackward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom);
#endif

  Blob cells_;           ///< (T + 1) x N x H, saved for backward
  Blob initial_hidden_;  ///< N x H, saved for backward
  Blob hidden_diff_;     ///< N x H: gradient reaching h_{t-1}, scratch
  Blob cell_diff_;       ///< N x H: gradient reaching c_{t-1}, scratch
};

}  // namespace demi

#endif  // DEMI_LAYERS_LSTM_LAYER_HPP_
