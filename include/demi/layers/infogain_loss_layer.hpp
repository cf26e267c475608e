#ifndef DEMI_LAYERS_INFOGAIN_LOSS_LAYER_HPP_
#define DEMI_LAYERS_INFOGAIN_LOSS_LAYER_HPP_

#include <memory>
#include <vector>

#include "demi/layers/probability_loss_layer.hpp"

namespace demi {

/// @brief Infogain loss of a softmax, as in Caffe master: a multinomial
/// logistic loss that weighs every (label, class) pair by an
/// information-gain matrix H,
/// p = softmax of the scores over infogain_loss_param.axis (default 1),
/// loss = -sum over (i, j) of sum over k of H[l, k] log(max(p[i, k, j], FLT_MIN))
/// / normalizer, with l = label[i, j]; H = identity gives SoftmaxWithLoss.
///
/// Bottoms: raw scores (outer x C x inner around the axis), outer * inner
/// integer labels in [0, C), and optionally H as a third bottom; without one,
/// H is read at setup from infogain_loss_param.source, a binary BlobProto.
/// H holds C x C values (any shape), row l for label l. Tops: the scalar loss
/// and, optionally, the probabilities (the scores' shape). Positions whose
/// label is loss_param.ignore_label are left out; the normalizer follows
/// loss_param.normalization as for SoftmaxWithLoss (VALID by default, the
/// legacy `normalize` honoured).
///
/// The softmax runs in an internal Softmax layer into a probabilities buffer,
/// which Forward then turns into the unscaled gradient
/// g[i, c, j] = p[i, c, j] sum_k H[l, k] - H[l, c] (zero at ignored positions)
/// and keeps for Backward. Backward therefore reads neither bottom nor top
/// data; it writes dscores = w g / normalizer, with w the loss weight, and
/// cannot backpropagate to the labels or to H.
class InfogainLossLayer : public ProbabilityLossLayer {
 public:
  using ProbabilityLossLayer::ProbabilityLossLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "InfogainLoss"; }
  int ExactNumBottomBlobs() const override { return -1; }
  int MinBottomBlobs() const override { return 2; }
  int MaxBottomBlobs() const override { return 3; }
  int ExactNumTopBlobs() const override { return -1; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index == 0; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;

 private:
  /// H: the third bottom when given, else the matrix read from `source`.
  const float* Infogain(const std::vector<Blob*>& bottom) const;

  Blob infogain_;  ///< H read from infogain_loss_param.source
};

}  // namespace demi

#endif  // DEMI_LAYERS_INFOGAIN_LOSS_LAYER_HPP_
