#ifndef DEMI_LAYERS_INPUT_LAYER_HPP_
#define DEMI_LAYERS_INPUT_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Declares net inputs: each top takes a shape from input_param.shape
/// (one shape for all tops, or one per top). The caller fills the data.
class InputLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  /// Inputs keep whatever shape the caller gave them after setup.
  void Reshape(const std::vector<Blob*>&, const std::vector<Blob*>&) override {}
  const char* type() const override { return "Input"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>&, const std::vector<Blob*>&) override {}
  void Backward_cpu(const std::vector<Blob*>&, const std::vector<bool>&,
                    const std::vector<Blob*>&) override {}
};

}  // namespace demi

#endif  // DEMI_LAYERS_INPUT_LAYER_HPP_
