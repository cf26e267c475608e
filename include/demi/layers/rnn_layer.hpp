#ifndef DEMI_LAYERS_RNN_LAYER_HPP_
#define DEMI_LAYERS_RNN_LAYER_HPP_

#include "demi/layers/recurrent_layer.hpp"

namespace demi {

/// @brief Elman recurrent layer, as in Caffe's RNN:
///   h_t = tanh(W_xh x_t + b_h + W_x_static x_static + W_hh (cont_t h_{t-1}))
///   o_t = tanh(W_ho h_t + b_o)
/// for t = 0 .. T - 1, with h_{-1} the initial state.
///
/// Bottoms: x (T x N x ...), cont (T x N), optional x_static (N x ...), and
/// with expose_hidden h_0 (1 x N x num_output). Tops: o (T x N x num_output)
/// and with expose_hidden h_T (1 x N x num_output). See RecurrentLayer for
/// cont and the state carried between batches.
///
/// Params, in Caffe's order (H = num_output): W_xh (H x X), b_h (H),
/// [W_x_static (H x S) with x_static], W_hh (H x H), W_ho (H x H), b_o (H).
///
/// Buffers saved for backward: "gates" (T x N x H) holds h_t,
/// "initial_hidden" (N x H) holds h_{-1}; scratch: "gates_diff", "step_rows"
/// and "output_diff" (T x N x H). Backward reads x, cont, x_static and o
/// (for tanh's derivative), not h_0 or h_T.
class RNNLayer : public RecurrentLayer {
 public:
  using RecurrentLayer::RecurrentLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "RNN"; }

 protected:
  int NumStates() const override { return 1; }
  int64_t GatesPerUnit() const override { return 1; }
  std::vector<std::vector<int64_t>> ExtraParamShapes() const override {
    return {{hidden_, hidden_}, {hidden_}};
  }
  void RecurrentForward(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void RecurrentBackward(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                         const std::vector<Blob*>& bottom) override;

 private:
  Blob initial_hidden_;  ///< N x H, saved for backward
  Blob output_diff_;     ///< T x N x H: gradient of W_ho h_t + b_o, scratch
};

}  // namespace demi

#endif  // DEMI_LAYERS_RNN_LAYER_HPP_
