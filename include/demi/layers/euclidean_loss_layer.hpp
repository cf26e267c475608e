#ifndef DEMI_LAYERS_EUCLIDEAN_LOSS_LAYER_HPP_
#define DEMI_LAYERS_EUCLIDEAN_LOSS_LAYER_HPP_

#include "demi/layers/loss_layer.hpp"

namespace demi {

/// @brief Sum of squares loss: loss = sum over k of (a[k] - b[k])^2 / (2 N),
/// with N = a.shape(0), as in Caffe.
///
/// Bottoms: a and b with equal counts and equal first axes (any shapes
/// otherwise). Top: the scalar loss. Gradients flow into both bottoms
/// (force_backward may reach either): da = w (a - b) / N and db = -da, with w
/// the loss weight. Forward keeps a - b in a buffer for Backward, which reads
/// neither bottom nor top data.
class EuclideanLossLayer : public LossLayer {
 public:
  using LossLayer::LossLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "EuclideanLoss"; }
  bool AllowForceBackward(int) const override { return true; }
  bool BackwardReadsBottomData(int) const override { return false; }
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
  Blob diff_;  ///< a - b, saved for backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_EUCLIDEAN_LOSS_LAYER_HPP_
