#ifndef DEMI_LAYERS_SILENCE_LAYER_HPP_
#define DEMI_LAYERS_SILENCE_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Consumes its bottoms and produces nothing, as in Caffe (so that
/// unused tops are not reported as net outputs).
///
/// Bottoms: one or more, any shapes. No tops. Forward does nothing; Backward
/// writes zero gradients into the bottoms that ask for one. It reads no data.
class SilenceLayer : public OneBodyLayer<Layer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override {}
  const char* type() const override { return "Silence"; }
  int MinBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 0; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override {}
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_SILENCE_LAYER_HPP_
