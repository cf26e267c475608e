#ifndef DEMI_LAYERS_TILE_LAYER_HPP_
#define DEMI_LAYERS_TILE_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Repeats the bottom tile_param.tiles times along tile_param.axis
/// (default 1), as in Caffe: viewing the bottom as outer x inner around the
/// axis (inner = count from the axis on), the top is outer x tiles x inner.
///
/// Shapes: the top is the bottom's shape with shape[axis] multiplied by tiles.
/// Backward sums the gradient of the copies: dx = sum over t of dy[:, t, :].
/// It reads no data.
class TileLayer : public Layer {
 public:
  using Layer::Layer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Tile"; }
  bool CanReplay() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#endif

 private:
  int64_t tiles_ = 1;
  int64_t outer_ = 0;
  int64_t inner_ = 0;
};

}  // namespace demi

#endif  // DEMI_LAYERS_TILE_LAYER_HPP_
