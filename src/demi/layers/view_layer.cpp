#include "demi/layers/view_layer.hpp"

namespace demi {

void ViewLayer::CheckNotInPlace(const std::vector<Blob*>& bottom,
                                const std::vector<Blob*>& top) const {
  DEMI_CHECK(top[0] != bottom[0], type(), " layer '", layer_param_.name(), "' cannot run in place");
}

void ViewLayer::ShareAs(const std::vector<int64_t>& shape, const std::vector<Blob*>& bottom,
                        const std::vector<Blob*>& top) const {
  top[0]->Reshape(shape);
  top[0]->ShareData(*bottom[0]);
  top[0]->ShareDiff(*bottom[0]);
}

void ViewLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (top[0]->data() != bottom[0]->data()) top[0]->ShareData(*bottom[0]);
  if (top[0]->diff() != bottom[0]->diff()) top[0]->ShareDiff(*bottom[0]);
}

}  // namespace demi
