#ifndef DEMI_LAYERS_SLICE_LAYER_HPP_
#define DEMI_LAYERS_SLICE_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Cuts its bottom into consecutive pieces along one axis, as in
/// Caffe (the inverse of Concat).
///
/// slice_param.axis (default 1, negative counts from the end; the legacy
/// slice_dim gives a non-negative axis, and only one of the two may be set)
/// picks the axis. With K tops, slice_point lists K - 1 strictly increasing
/// cut positions in (0, dim]: top i takes indexes [point(i-1), point(i)) with
/// point(-1) = 0 and point(K-1) = dim. Without slice_point the axis is split
/// into K equal pieces, and K must divide it. Tops keep the bottom's other
/// dimensions. With one top it shares the bottom's data and diff.
///
/// Backward concatenates the tops' gradients into the bottom's; it reads no
/// data.
class SliceLayer : public OneBodyLayer<Layer> {
 public:
  using OneBodyLayer::OneBodyLayer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Slice"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void BackwardOnDevice(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                        const std::vector<Blob*>& bottom) override;

 private:
  int axis_ = 1;
};

}  // namespace demi

#endif  // DEMI_LAYERS_SLICE_LAYER_HPP_
