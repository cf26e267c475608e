#ifndef DEMI_LAYERS_PROBABILITY_LOSS_LAYER_HPP_
#define DEMI_LAYERS_PROBABILITY_LOSS_LAYER_HPP_

#include <memory>
#include <vector>

#include "demi/layers/class_label.hpp"
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
  /// Walks the outer_num_ x inner_num_ positions of prob_ with their
  /// `label`s: zeroes the column of a position labelled ignore_label (its
  /// channels_ probabilities, inner_num_ apart) and calls
  /// gradient(index, label, column) on every other; returns how many those are.
  template <typename F>
  int64_t ForEachLabeledColumn(const float* label, F gradient) {
    float* prob = prob_.mutable_cpu_data();
    int64_t valid = 0;
    for (int64_t i = 0; i < outer_num_; ++i) {
      for (int64_t j = 0; j < inner_num_; ++j) {
        const int64_t index = i * inner_num_ + j;
        float* column = prob + i * channels_ * inner_num_ + j;
        if (has_ignore_label_ && ClassLabel(label[index]) == ignore_label_) {
          for (int64_t c = 0; c < channels_; ++c) column[c * inner_num_] = 0.0f;
          continue;
        }
        gradient(index, label[index], column);
        ++valid;
      }
    }
    return valid;
  }

  std::unique_ptr<Layer> softmax_;
  std::vector<Blob*> softmax_bottom_;
  std::vector<Blob*> softmax_top_;
  Blob prob_;  ///< saved for backward; subclasses may overwrite it with the gradient
  LossParameter::NormalizationMode normalization_ = LossParameter::VALID;
  bool has_ignore_label_ = false;
  int64_t ignore_label_ = 0;
  int64_t outer_num_ = 0;    ///< the scores' axes before the class axis, set by Reshape
  int64_t channels_ = 0;     ///< classes
  int64_t inner_num_ = 0;    ///< the axes after it
  float normalizer_ = 1.0f;  ///< of the last Forward, used by Backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_PROBABILITY_LOSS_LAYER_HPP_
