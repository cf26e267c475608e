#ifndef DEMI_LAYERS_PARAMETER_LAYER_HPP_
#define DEMI_LAYERS_PARAMETER_LAYER_HPP_

#include <vector>

#include "demi/layer.hpp"

namespace demi {

/// @brief Exposes a learned blob as a top, as in Caffe: no bottoms; one top of
/// parameter_param.shape holding blobs_[0] (zeros until trained or loaded).
///
/// Forward copies the param into the top (the top keeps memory of its own, so
/// the planner may place it like any activation); Backward adds the top's
/// gradient to the param's. It reads no data.
class ParameterLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Parameter"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;

 private:
  std::vector<int64_t> shape_;
};

}  // namespace demi

#endif  // DEMI_LAYERS_PARAMETER_LAYER_HPP_
