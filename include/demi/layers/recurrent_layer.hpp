#ifndef DEMI_LAYERS_RECURRENT_LAYER_HPP_
#define DEMI_LAYERS_RECURRENT_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief What RNN and LSTM share, as in Caffe's RecurrentLayer, computed
/// directly (loops over time with GEMMs) instead of through an unrolled net.
/// The CUDA twin runs the same steps: cuBLAS GEMMs and one element-wise
/// kernel per step, in the CPU's summation order where it sums.
///
/// Bottoms, in order:
/// - x: T x N x ... (T time steps of N independent streams; each step's
///   input is the product of the axes after the second, X values);
/// - cont: T x N, the sequence continuation indicators: 0 where a stream
///   starts a new sequence (its previous state is dropped), 1 where it
///   continues. Not differentiable: Backward refuses a gradient for it;
/// - x_static (optional): N x ..., an input seen at every step (S values
///   per stream);
/// - with recurrent_param.expose_hidden, the initial states (each 1 x N x
///   num_output; RNN: h_0; LSTM: h_0, c_0).
/// Tops: the output (T x N x num_output) and, with expose_hidden, the final
/// states (1 x N x num_output each; RNN: h_T; LSTM: h_T, c_T).
/// Without expose_hidden the initial states are the final states of the
/// previous Forward (zero at first and whenever N changes), as in Caffe: a
/// stream whose cont is 1 at t = 0 continues the previous batch. No gradient
/// flows across batches. The carried states outlive an iteration, so they
/// are layer state outside the memory plan, not registered buffers.
///
/// Params, in Caffe's order (H = num_output, G = gates per unit x H):
/// W_x (G x X), b (G), [W_static (G x S) with x_static], W_h (G x H), then
/// the subclass's own. 1-D params take recurrent_param.bias_filler, the
/// others weight_filler. The gate pre-activations of step t are
/// W_x x_t + b + W_static x_static + W_h (cont_t h_{t-1}).
///
/// Buffers: "gates" (T x N x G), the pre-activations, which the subclass
/// turns into its activations in place, saved for backward; scratch
/// "gates_diff" (T x N x G) and "step_rows" (N x G). Backward reads x, cont
/// and x_static (not the exposed initial states, which Forward copies) and
/// the output top's data (not the final states').
class RecurrentLayer : public OneBodyLayer<Layer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  int MinBottomBlobs() const override { return 2 + NumExposed(); }
  int MaxBottomBlobs() const override { return 3 + NumExposed(); }
  int ExactNumTopBlobs() const override { return 1 + NumExposed(); }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 1; }
  bool BackwardReadsBottomData(int bottom_index) const override {
    return bottom_index < first_state_bottom_;
  }
  bool BackwardReadsTopData(int top_index) const override { return top_index == 0; }

 protected:
  static constexpr int kMaxStates = 2;

  /// Recurrent state blobs: 1 (RNN: h) or 2 (LSTM: h, c).
  virtual int NumStates() const = 0;
  /// Gate pre-activations per hidden unit: 1 (RNN) or 4 (LSTM).
  virtual int64_t GatesPerUnit() const = 0;
  /// Shapes of the params after W_h (RNN: W_ho, b_o).
  virtual std::vector<std::vector<int64_t>> ExtraParamShapes() const { return {}; }
  /// Runs the steps over gates_ (holding every projection but W_h's) and
  /// writes the output top and the final states (SaveFinalState), on
  /// context().device like everything below.
  virtual void RecurrentForward(const std::vector<Blob*>& bottom,
                                const std::vector<Blob*>& top) = 0;
  /// Fills dgates_ with the gradient of the gate pre-activations,
  /// accumulates the gradients of W_h and the subclass's params, and writes
  /// the exposed initial states' gradients where propagate_down asks.
  virtual void RecurrentBackward(const std::vector<Blob*>& top,
                                 const std::vector<bool>& propagate_down,
                                 const std::vector<Blob*>& bottom) = 0;

  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;

  int NumExposed() const {
    return layer_param_.recurrent_param().expose_hidden() ? NumStates() : 0;
  }
  /// State s at the start of this Forward (N x H): the exposed bottom or
  /// the state carried from the previous Forward.
  const float* InitialState(const std::vector<Blob*>& bottom, int s) const;
  /// Stores state s after the last step: into the exposed top or the carry.
  void SaveFinalState(const std::vector<Blob*>& top, int s, const float* state);

  int64_t hidden_ = 0;      ///< H = num_output
  int64_t gates_dim_ = 0;   ///< G
  int64_t input_dim_ = 0;   ///< X
  int64_t static_dim_ = 0;  ///< S
  bool static_input_ = false;
  bool expose_hidden_ = false;
  int first_state_bottom_ = 2;  ///< index of the first exposed initial state
  int w_h_param_ = 2;           ///< index of W_h in blobs_; the subclass's follow
  int64_t steps_ = 0;           ///< T
  int64_t streams_ = 0;         ///< N
  Blob gates_;                  ///< T x N x G, saved for backward
  Blob dgates_;                 ///< T x N x G, scratch
  Blob step_rows_;              ///< N x G, scratch

 private:
  Blob carried_[kMaxStates];  ///< final states of the previous Forward (not exposed)
};

}  // namespace demi

#endif  // DEMI_LAYERS_RECURRENT_LAYER_HPP_
