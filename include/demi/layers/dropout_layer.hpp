#ifndef DEMI_LAYERS_DROPOUT_LAYER_HPP_
#define DEMI_LAYERS_DROPOUT_LAYER_HPP_

#include "demi/layers/neuron_layer.hpp"

namespace demi {

/// @brief Inverted dropout, as in Caffe: in the TRAIN phase
/// y = x * m / (1 - p) with m ~ Bernoulli(1 - p) drawn per element from the
/// layer's random stream, p = dropout_param.dropout_ratio in [0, 1); in the
/// TEST phase y = x.
///
/// Shapes: bottom and top alike (in place allowed). In TRAIN, Forward keeps
/// the scaled mask m / (1 - p) in a buffer for Backward (dx = dy * mask); in
/// TEST the buffer stays empty and dx = dy. Backward reads neither bottom nor
/// top data.
class DropoutLayer : public NeuronLayer {
 public:
  using NeuronLayer::NeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Dropout"; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }
  bool ForwardDraws() const override { return true; }
  /// A replay applies the mask Forward drew: no second draw.
  bool ReplayReadsSavedBuffers() const override { return true; }
  void Replay(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  /// On a GPU, 16-bit blobs too (the mask stays FLOAT).
  BlobFormats narrow_blobs() const override {
    return NarrowBlobsWhen(context_.device == Device::kGPU, BlobFormats::kUniform);
  }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
  bool StagesHostInputs() const override { return phase_ == TRAIN; }
#ifndef CPU_ONLY
  /// TRAIN: draws the uniforms the mask is made of and uploads them.
  void StageHostInputs() override;
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  /// FLOAT blobs: Backward_cpu, whose math calls run on context().device.
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
  /// to = from * mask (TRAIN) or from (TEST), of blobs stored in `type`, on
  /// the GPU: y from x, or dx from dy.
  void ApplyMaskGpu(Type type, int64_t count, const void* from, void* to) const;
#endif

 private:
  float ratio_ = 0.5f;  ///< probability of dropping an element
  float scale_ = 2.0f;  ///< 1 / (1 - ratio_)
  Blob mask_;           ///< 0 or scale_ per element (TRAIN only), saved for backward
};

}  // namespace demi

#endif  // DEMI_LAYERS_DROPOUT_LAYER_HPP_
