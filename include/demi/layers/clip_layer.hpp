#ifndef DEMI_LAYERS_CLIP_LAYER_HPP_
#define DEMI_LAYERS_CLIP_LAYER_HPP_

#include "demi/layers/elementwise.hpp"
#include "demi/util/host_device.hpp"

namespace demi {

/// Clip's formulas, for the host loop and the CUDA kernel alike.
struct ClipForward {
  float min, max;
  /// std::min(std::max(x, min), max), spelled out for the device (a NaN stays NaN).
  DEMI_HOST_DEVICE float operator()(float x) const {
    const float above = x < min ? min : x;
    return max < above ? max : above;
  }
};
struct ClipBackward {
  float min, max;
  /// Reads the top: min < y < max exactly where min < x < max.
  DEMI_HOST_DEVICE float operator()(float y, float dy) const {
    return y > min && y < max ? dy : 0.0f;
  }
};

/// @brief y = min(max(x, min), max), element-wise, with clip_param's min and
/// max (both required, min < max).
///
/// Shapes: bottom and top alike (in place allowed, as for ReLU6). Backward
/// reads the top only: min < y < max exactly where min < x < max, so
/// dx = dy there and 0 elsewhere. (Caffe reads x and also passes the gradient
/// at x = min and x = max exactly; the two differ only on those two points,
/// where the function has no derivative.)
class ClipLayer : public MappedNeuronLayer<ClipForward, ClipBackward> {
 public:
  using MappedNeuronLayer::MappedNeuronLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Clip"; }

 protected:
  /// With min and max rounded to a 16-bit `stored` type: for 16-bit x that
  /// clips to what clipping to the exact bounds stores, and keeps Backward's
  /// test of y against the bounds exact.
  ClipForward forward_formula(Type stored) const override;
  ClipBackward backward_formula(Type stored) const override;

 private:
  float min_ = 0.0f;
  float max_ = 0.0f;
};

}  // namespace demi

#endif  // DEMI_LAYERS_CLIP_LAYER_HPP_
