#ifndef DEMI_LAYERS_FLATTEN_LAYER_HPP_
#define DEMI_LAYERS_FLATTEN_LAYER_HPP_

#include "demi/layers/view_layer.hpp"

namespace demi {

/// @brief Merges the axes [axis, end_axis] of the bottom into one, as in
/// Caffe: a bottom of shape (d0, ..., dn) gives a top of shape
/// (d0, ..., d(axis-1), d(axis) * ... * d(end_axis), d(end_axis+1), ..., dn).
/// flatten_param.axis defaults to 1 and end_axis to -1 (the last axis); both
/// may count from the end. The default turns N x C x H x W into N x CHW.
///
/// A view (ViewLayer): the top shares the bottom's data and diff. Not in place.
class FlattenLayer : public ViewLayer {
 public:
  using ViewLayer::ViewLayer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Flatten"; }
};

}  // namespace demi

#endif  // DEMI_LAYERS_FLATTEN_LAYER_HPP_
