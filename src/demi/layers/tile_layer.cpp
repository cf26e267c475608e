#include "demi/layers/tile_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/math.hpp"

namespace demi {

void TileLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const TileParameter& param = layer_param_.tile_param();
  const Blob& x = *bottom[0];
  const int axis = CanonicalAxis(*this, x, param.axis(), "tile_param.axis");
  DEMI_CHECK(param.tiles() > 0, "Tile layer '", layer_param_.name(),
             "' needs tile_param.tiles > 0, got ", param.tiles());
  tiles_ = param.tiles();
  outer_ = x.count(0, axis);
  inner_ = x.count(axis);
  std::vector<int64_t> top_shape = x.shape();
  top_shape[axis] *= tiles_;
  top[0]->Reshape(top_shape);
}

void TileLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const float* x = bottom[0]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  for (int64_t o = 0; o < outer_; ++o) {
    for (int64_t t = 0; t < tiles_; ++t)
      Copy(inner_, x + o * inner_, y + (o * tiles_ + t) * inner_);
  }
}

void TileLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  for (int64_t o = 0; o < outer_; ++o) {
    const float* copies = dy + o * tiles_ * inner_;
    Copy(inner_, copies, dx + o * inner_);
    for (int64_t t = 1; t < tiles_; ++t) Axpy(inner_, 1.0f, copies + t * inner_, dx + o * inner_);
  }
}

DEMI_REGISTER_LAYER(Tile);

}  // namespace demi
