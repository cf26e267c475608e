#ifndef DEMI_LAYERS_PROBABILITY_LOSS_LAYER_HPP_
#define DEMI_LAYERS_PROBABILITY_LOSS_LAYER_HPP_

#include <memory>
#include <vector>

#include "demi/layers/loss_layer.hpp"

namespace demi {

/// @brief Base of the losses taken on softmax probabilities of the scores
/// (SoftmaxWithLoss, InfogainLoss): an inner Softmax layer, run on the net's
/// context, writes prob_ from bottom 0; loss_param gives the normalization
/// and ignore_label. prob_ and the inner layer's buffers are registered as
/// this layer's (prob_ is saved for backward).
class ProbabilityLossLayer : public LossLayer {
 public:
  using LossLayer::LossLayer;

 protected:
  /// Sets up the inner Softmax over `axis` of `scores` and reads loss_param;
  /// for LayerSetUp.
  void SetUpSoftmax(Blob* scores, int axis);
  /// Reshapes prob_ to `scores`; for Reshape.
  void ReshapeSoftmax(Blob* scores);
  /// prob_ = softmax(scores) on the layer's device, copied into the
  /// optional second top.
  void ForwardSoftmax(const std::vector<Blob*>& top);

  std::unique_ptr<Layer> softmax_;
  std::vector<Blob*> softmax_bottom_;
  std::vector<Blob*> softmax_top_;
  Blob prob_;  ///< saved for backward; subclasses may overwrite it with the gradient
  LossParameter::NormalizationMode normalization_ = LossParameter::VALID;
  bool has_ignore_label_ = false;
  int64_t ignore_label_ = 0;
};

}  // namespace demi

#endif  // DEMI_LAYERS_PROBABILITY_LOSS_LAYER_HPP_
