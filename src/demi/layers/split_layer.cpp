#include "demi/layers/split_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/device_math.hpp"

namespace demi {

void SplitLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  for (Blob* blob : top) {
    DEMI_CHECK(blob != bottom[0], "Split layer '", layer_param_.name(), "' cannot run in place");
    blob->ReshapeLike(*bottom[0]);
    blob->ShareData(*bottom[0]);
  }
}

void SplitLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  // Reshape keeps every top a view of the bottom's data, so nothing moves;
  // re-share in case the bottom's memory was replaced since.
  for (Blob* blob : top) {
    if (blob->data() != bottom[0]->data()) blob->ShareData(*bottom[0]);
  }
}

void SplitLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  if (!propagate_down[0]) return;
  const Device device = context_.device;
  const int64_t count = bottom[0]->count();
  float* dx = bottom[0]->mutable_diff_on(device);
  Copy(device, count, top[0]->diff_on(device), dx);
  for (size_t i = 1; i < top.size(); ++i) Axpy(device, count, 1.0f, top[i]->diff_on(device), dx);
}

DEMI_REGISTER_LAYER(Split);

}  // namespace demi
