#ifndef DEMI_LAYERS_VIEW_LAYER_HPP_
#define DEMI_LAYERS_VIEW_LAYER_HPP_

#include <vector>

#include "demi/layer.hpp"

namespace demi {

/// @brief Base of the layers whose one top is the bottom under another shape
/// of the same count (Flatten, Reshape): a subclass's Reshape computes the
/// shape and calls ShareAs. The top shares the bottom's data and diff, so
/// Forward and Backward move nothing and Backward reads no data. Not in place.
class ViewLayer : public Layer {
 public:
  using Layer::Layer;
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  /// Throws when the top is the bottom; first thing in a subclass's Reshape.
  void CheckNotInPlace(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) const;
  /// Makes top[0] a view of bottom[0] with `shape`; ends a subclass's Reshape.
  void ShareAs(const std::vector<int64_t>& shape, const std::vector<Blob*>& bottom,
               const std::vector<Blob*>& top) const;
  /// Re-shares only where the bottom's memories were replaced since Reshape.
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  /// The bottom's diff is the top's: the gradient is already in place.
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override {}
};

}  // namespace demi

#endif  // DEMI_LAYERS_VIEW_LAYER_HPP_
