#ifndef DEMI_LAYERS_MULTINOMIAL_LOGISTIC_LOSS_LAYER_HPP_
#define DEMI_LAYERS_MULTINOMIAL_LOGISTIC_LOSS_LAYER_HPP_

#include "demi/layers/loss_layer.hpp"

namespace demi {

/// @brief Negative log likelihood of probabilities, as in Caffe:
/// loss = -sum over n of log(max(p[n, l_n], 1e-20)) / N.
///
/// Bottoms: probabilities p, N x ... (each item's count(1) values are its K
/// classes; e.g. a Softmax output), and N integer labels in [0, K) stored as
/// floats. Top: the scalar loss. Backward writes dp[n, l_n] =
/// -w / (N max(p[n, l_n], 1e-20)) and 0 elsewhere, with w the loss weight. It
/// reads both bottoms' data (p is usually a Softmax output, which that layer's
/// Backward keeps anyway), not the top, and cannot backpropagate to the labels.
class MultinomialLogisticLossLayer : public PerSampleLossLayer {
 public:
  using PerSampleLossLayer::PerSampleLossLayer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "MultinomialLogisticLoss"; }
  bool BackwardReadsBottomData(int) const override { return true; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_MULTINOMIAL_LOGISTIC_LOSS_LAYER_HPP_
