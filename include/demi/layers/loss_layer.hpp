#ifndef DEMI_LAYERS_LOSS_LAYER_HPP_
#define DEMI_LAYERS_LOSS_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Base of loss layers: bottoms (prediction, target), one scalar top
/// with loss weight 1 unless the prototxt says otherwise. Gradients never flow
/// into the target by force_backward.
class LossLayer : public Layer {
 public:
  explicit LossLayer(const LayerParameter& param) : Layer(param) {
    if (layer_param_.loss_weight_size() == 0) layer_param_.add_loss_weight(1.0f);
  }
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override {
    DEMI_CHECK(bottom[0]->shape(0) == bottom[1]->shape(0), type(), " layer '", layer_param_.name(),
               "': prediction ", bottom[0]->shape_string(), " and target ",
               bottom[1]->shape_string(), " differ in their first (batch) axis");
    top[0]->Reshape(std::vector<int64_t>{});
  }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AutoTopBlobs() const override { return true; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 1; }

  /// The divisor of a loss summed over `valid` of outer x inner labels under
  /// `mode` (never below 1).
  static float Normalizer(LossParameter::NormalizationMode mode, int64_t outer, int64_t inner,
                          int64_t valid);
  /// loss_param's normalization; where only the legacy `normalize` is set,
  /// VALID for true and BATCH_SIZE for false; `fallback` where neither is.
  static LossParameter::NormalizationMode NormalizationOf(
      const LossParameter& param, LossParameter::NormalizationMode fallback);

 protected:
  /// Ends a Forward: the top's value is loss / normalizer; returns the
  /// normalizer, for Backward.
  static float WriteNormalizedLoss(double loss, float normalizer, Blob* top);
  /// The Backward of a loss whose Forward saved its unscaled gradient: refuses
  /// a gradient to the target (bottom 1, `target` in the message) and, where
  /// propagate_down[0], sets bottom 0's diff to (top diff / normalizer) * saved
  /// on context().device.
  void BackwardFromSaved(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                         const std::vector<Blob*>& bottom, const char* target, const Blob& saved,
                         float normalizer) const;
#ifndef CPU_ONLY
  /// BackwardFromSaved on the GPU with the normalizer that Forward_gpu left
  /// on the device (`*device_normalizer`, one float): nothing read on the host.
  void BackwardFromSavedOnGpu(const std::vector<Blob*>& top,
                              const std::vector<bool>& propagate_down,
                              const std::vector<Blob*>& bottom, const char* target,
                              const Blob& saved, SyncedMemory* device_normalizer) const;
#endif
};

/// @brief Base of the losses averaged over samples with one label each
/// (MultinomialLogisticLoss, HingeLoss, ContrastiveLoss): bottom 0 is
/// N x ..., num_ = N samples of dim_ values each, and the bottom holding the
/// labels has N values.
class PerSampleLossLayer : public LossLayer {
 public:
  using LossLayer::LossLayer;

 protected:
  /// LossLayer::Reshape, then num_ and dim_ from bottom 0; throws unless
  /// bottom `labels` holds num_ values (`what`, as the message names them).
  void ReshapeSamples(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top, int labels,
                      const char* what);
  /// The mean over samples of a summed `loss` (divided by num_, at least 1).
  double SampleMean(double loss) const { return loss / static_cast<double>(SampleDivisor()); }
  /// top's diff / num_ (at least 1): the scale of one sample's gradient.
  float SampleScale(const Blob& top) const {
    return top.cpu_diff()[0] / static_cast<float>(SampleDivisor());
  }

  /// num_, at least 1: the divisor of the mean over samples.
  int64_t SampleDivisor() const { return num_ > 1 ? num_ : 1; }

  int64_t num_ = 0;
  int64_t dim_ = 0;
};

}  // namespace demi

#endif  // DEMI_LAYERS_LOSS_LAYER_HPP_
