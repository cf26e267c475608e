#ifndef DEMI_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP_
#define DEMI_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP_

#include "demi/layers/loss_layer.hpp"

namespace demi {

/// @brief Cross-entropy of sigmoid outputs against targets, as in Caffe:
/// loss = -sum over k of [t log p + (1 - t) log(1 - p)] / normalizer, with
/// p = sigmoid(x[k]), computed in the stable form
/// max(x, 0) - x t + log(1 + exp(-|x|)).
///
/// Bottoms: scores x (N x ...) and targets t in [0, 1], with equal counts.
/// Top: the scalar loss. Elements whose target equals loss_param.ignore_label
/// (as an integer) are left out. The normalizer follows
/// loss_param.normalization: FULL = count, VALID = elements not ignored,
/// BATCH_SIZE = N, NONE = 1, never below 1; as in Caffe the default for this
/// layer is BATCH_SIZE, and the legacy `normalize` (when `normalization` is not
/// given) means VALID if true and BATCH_SIZE if false.
///
/// Forward keeps the unscaled gradient p - t (0 where ignored) in a buffer;
/// Backward scales it by loss weight / normalizer and reads neither bottom nor
/// top data. It cannot backpropagate to the targets.
class SigmoidCrossEntropyLossLayer : public LossLayer {
 public:
  using LossLayer::LossLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "SigmoidCrossEntropyLoss"; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  /// On the GPU the loss and its normalizer stay on the device, where
  /// Backward reads them.
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#endif

 private:
  Blob gradient_;  ///< p - t, 0 where ignored; saved for backward
  Blob terms_;     ///< Forward_gpu's per-element losses, then 1 where counted (2 x count)
  LossParameter::NormalizationMode normalization_ = LossParameter::BATCH_SIZE;
  bool has_ignore_label_ = false;
  int64_t ignore_label_ = 0;
  float normalizer_ = 1.0f;         ///< of the last Forward_cpu, used by Backward_cpu
  SyncedMemory device_normalizer_;  ///< Forward_gpu's normalizer, for Backward_gpu
};

}  // namespace demi

#endif  // DEMI_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP_
