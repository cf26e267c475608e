#ifndef DEMI_LAYERS_RESHAPE_LAYER_HPP_
#define DEMI_LAYERS_RESHAPE_LAYER_HPP_

#include <vector>

#include "demi/layer.hpp"

namespace demi {

/// @brief Gives the bottom a new shape with the same count, as in Caffe.
///
/// reshape_param.shape lists the new dimensions; a 0 copies the bottom's
/// dimension at the same position and a single -1 is inferred so that the
/// counts agree. `axis` and `num_axes` select the part of the bottom's shape
/// that `shape` replaces: bottom axes [axis, axis + num_axes) (num_axes -1:
/// to the end). A negative axis counts from the end, -1 being the position
/// after the last axis (so `axis: -1 num_axes: 0` appends axes). With
/// bottom (2, 3, 4), `shape { dim: 0 dim: -1 }` gives (2, 12) and
/// `axis: 1 shape { dim: 3 dim: 2 dim: 2 }` gives (2, 3, 2, 2).
///
/// The top shares the bottom's data and diff, so Forward and Backward move
/// nothing and Backward reads no data. Not in place.
class ReshapeLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Reshape"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;

 private:
  std::vector<int> copy_axes_;  ///< positions in `shape` holding 0
  int inferred_axis_ = -1;      ///< position in `shape` holding -1, or -1
  int64_t constant_count_ = 1;  ///< product of the explicit (positive) dimensions
};

}  // namespace demi

#endif  // DEMI_LAYERS_RESHAPE_LAYER_HPP_
