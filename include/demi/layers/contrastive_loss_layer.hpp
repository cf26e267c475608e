#ifndef DEMI_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP_
#define DEMI_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP_

#include "demi/layers/loss_layer.hpp"

namespace demi {

/// @brief Contrastive loss for siamese networks (Hadsell et al. 2006), as in
/// Caffe: with d_n = ||a_n - b_n|| for each of N pairs,
/// loss = sum over n of [y_n d_n^2 + (1 - y_n) max(margin - d_n, 0)^2] / 2N,
/// or, with contrastive_loss_param.legacy_version, max(margin - d_n^2, 0) in
/// place of the dissimilar term.
///
/// Bottoms: features a and b (N x ..., equal counts) and N similarity labels y
/// (non-zero, as an integer, means similar). Top: the scalar loss. Forward
/// keeps a - b and one gradient coefficient per pair (1 for similar pairs,
/// -(margin - d) / (d + 1e-4) or -1 (legacy) for dissimilar ones inside the
/// margin, 0 outside); Backward writes da = w c_n (a_n - b_n) / N and
/// db = -da, and reads neither bottom nor top data. It cannot backpropagate to
/// the similarity labels.
class ContrastiveLossLayer : public PerSampleLossLayer {
 public:
  using PerSampleLossLayer::PerSampleLossLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "ContrastiveLoss"; }
  int ExactNumBottomBlobs() const override { return 3; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 2; }
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
  Blob diff_;       ///< a - b; saved for backward
  Blob coeff_;      ///< per pair; saved for backward
  Blob pair_loss_;  ///< per pair, Forward_gpu's terms before their sum
};

}  // namespace demi

#endif  // DEMI_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP_
