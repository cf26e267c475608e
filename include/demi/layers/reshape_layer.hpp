#ifndef DEMI_LAYERS_RESHAPE_LAYER_HPP_
#define DEMI_LAYERS_RESHAPE_LAYER_HPP_

#include <vector>

#include "demi/layers/view_layer.hpp"

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
/// A view (ViewLayer): the top shares the bottom's data and diff. Not in place.
class ReshapeLayer : public ViewLayer {
 public:
  using ViewLayer::ViewLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Reshape"; }

 private:
  std::vector<int> copy_axes_;  ///< positions in `shape` holding 0
  int inferred_axis_ = -1;      ///< position in `shape` holding -1, or -1
  int64_t constant_count_ = 1;  ///< product of the explicit (positive) dimensions
};

}  // namespace demi

#endif  // DEMI_LAYERS_RESHAPE_LAYER_HPP_
