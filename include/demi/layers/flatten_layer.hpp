#ifndef DEMI_LAYERS_FLATTEN_LAYER_HPP_
#define DEMI_LAYERS_FLATTEN_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Merges the axes [axis, end_axis] of the bottom into one, as in
/// Caffe: a bottom of shape (d0, ..., dn) gives a top of shape
/// (d0, ..., d(axis-1), d(axis) * ... * d(end_axis), d(end_axis+1), ..., dn).
/// flatten_param.axis defaults to 1 and end_axis to -1 (the last axis); both
/// may count from the end. The default turns N x C x H x W into N x CHW.
///
/// The top shares the bottom's data and diff, so Forward and Backward move
/// nothing and Backward reads no data. Not in place.
class FlattenLayer : public Layer {
 public:
  using Layer::Layer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Flatten"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
};

}  // namespace demi

#endif  // DEMI_LAYERS_FLATTEN_LAYER_HPP_
