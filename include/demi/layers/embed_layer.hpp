#ifndef DEMI_LAYERS_EMBED_LAYER_HPP_
#define DEMI_LAYERS_EMBED_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Embedding lookup, as in Caffe: y[i, :] = W[x[i], :] + b, for every
/// element x[i] of the bottom, an integer index in [0, input_dim) stored as a
/// float (a one-hot InnerProduct without the one-hot vectors).
///
/// Shapes: bottom any shape; top = bottom shape + [num_output]. W (blobs_[0])
/// is input_dim x num_output, b (blobs_[1], with embed_param.bias_term) is
/// num_output, filled by embed_param's weight_filler and bias_filler. A value
/// that is not an index in range is an error naming the layer, value and
/// position. Gradients go to W and b only (the indices are not
/// differentiable): dW[x[i], :] += dy[i, :], db += sum over i of dy[i, :].
/// Backward reads the bottom data (the indices), not the top.
class EmbedLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Embed"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return true; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#endif

 private:
  /// The row of W that `value`, input `i` of `bottom`, reads; throws unless
  /// it is a whole number in [0, K).
  int64_t CheckedRow(float value, int64_t i, const Blob& bottom) const;

  int64_t num_output_ = 0;  ///< N
  int64_t input_dim_ = 0;   ///< K, the number of indices
  bool bias_term_ = true;
  /// Backward_gpu's grouping of the positions by the row of W they read: the
  /// rows used, their group starts (one more), then the positions (built on
  /// the host, as floats).
  Blob gather_;
};

}  // namespace demi

#endif  // DEMI_LAYERS_EMBED_LAYER_HPP_
