#ifndef DEMI_LAYERS_SOFTMAX_LOSS_LAYER_HPP_
#define DEMI_LAYERS_SOFTMAX_LOSS_LAYER_HPP_

#include <memory>
#include <vector>

#include "demi/layers/bad_label_record.hpp"
#include "demi/layers/probability_loss_layer.hpp"

namespace demi {

/// @brief Multinomial logistic loss of a softmax, as in Caffe:
/// p = softmax of the scores over softmax_param.axis,
/// loss = -sum over (i, j) of log p[i, label[i, j], j] / normalizer,
/// the sum taken over outer indices i and inner positions j whose label is
/// not loss_param.ignore_label.
///
/// Bottoms: scores (outer x C x inner around the softmax axis) and labels,
/// outer * inner integer values in [0, C) (e.g. N x C x H x W scores on
/// axis 1 take N * H * W labels). Tops: the scalar loss and, optionally, the
/// probabilities (the scores' shape). The normalizer follows
/// loss_param.normalization: FULL = outer * inner, VALID (the default) = the
/// labels not ignored, BATCH_SIZE = outer, NONE = 1, never below 1; the legacy
/// `normalize: false` means BATCH_SIZE when normalization is not given.
///
/// The softmax runs in an internal Softmax layer into a probabilities buffer,
/// which Forward then turns into the unscaled gradient p - onehot(label)
/// (zero at ignored positions) and keeps for Backward. Backward therefore
/// reads neither bottom nor top data; it writes the gradient of the scores
/// scaled by loss weight / normalizer, and cannot backpropagate to the labels.
class SoftmaxWithLossLayer : public ProbabilityLossLayer {
 public:
  using ProbabilityLossLayer::ProbabilityLossLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "SoftmaxWithLoss"; }
  int ExactNumTopBlobs() const override { return -1; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }
  /// A label outside the classes that Forward_gpu found since the last
  /// check (the lowest position's), with the CPU's message.
  void CheckDeferredErrors() override;

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  /// On the GPU nothing is read back: the labels are checked there (a bad
  /// one raised by CheckDeferredErrors), and the loss and its normalizer
  /// stay on the device, where Backward reads them.
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#endif

 private:
  Blob position_loss_;  ///< Forward_gpu's loss per (outer, inner) position, before the sum
  SyncedMemory device_normalizer_;  ///< Forward_gpu's normalizer, for Backward_gpu
  BadLabelRecord bad_label_;        ///< a label outside the classes Forward_gpu found
};

}  // namespace demi

#endif  // DEMI_LAYERS_SOFTMAX_LOSS_LAYER_HPP_
