#ifndef DEMI_LAYERS_HINGE_LOSS_LAYER_HPP_
#define DEMI_LAYERS_HINGE_LOSS_LAYER_HPP_

#include "demi/layers/loss_layer.hpp"

namespace demi {

/// @brief One-versus-all hinge loss, as in Caffe: with t[n, k] = 1 for the
/// label k = l[n] and -1 otherwise, and margins m = max(0, 1 - t x),
/// loss = sum of m / N (hinge_loss_param.norm L1, the default) or
/// sum of m^2 / N (L2).
///
/// Bottoms: scores x, N x ... (each item's count(1) values are its K classes),
/// and N integer labels in [0, K) stored as floats. Top: the scalar loss.
/// Forward keeps the unscaled gradient (-t where m > 0 for L1, -2 t m for L2)
/// in a buffer; Backward scales it by loss weight / N and reads neither bottom
/// nor top data. It cannot backpropagate to the labels.
class HingeLossLayer : public PerSampleLossLayer {
 public:
  using PerSampleLossLayer::PerSampleLossLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "HingeLoss"; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;

 private:
  Blob gradient_;  ///< d(sum of margins) / dx; saved for backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_HINGE_LOSS_LAYER_HPP_
