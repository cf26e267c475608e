#include "demi/layers/filter_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void FilterLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  selector_index_ = static_cast<int>(bottom.size()) - 1;
  DEMI_CHECK(top.size() == bottom.size() - 1, "Filter layer '", layer_param_.name(),
             "' needs one top per data bottom: got ", bottom.size(),
             " bottoms (the last is the selector) and ", top.size(), " tops");
}

void FilterLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Blob& selector = *bottom[selector_index_];
  DEMI_CHECK(selector.num_axes() >= 1 && selector.count() == selector.shape(0), "Filter layer '",
             layer_param_.name(), "' needs a selector of shape (N) or (N, 1, ...), got ",
             selector.shape_string());
  const int64_t num = selector.shape(0);
  shapes_.resize(top.size());
  for (int i = 0; i < selector_index_; ++i) {
    DEMI_CHECK(bottom[i]->num_axes() >= 1 && bottom[i]->shape(0) == num, "Filter layer '",
               layer_param_.name(), "': bottom ", i, " of shape ", bottom[i]->shape_string(),
               " and the selector ", selector.shape_string(), " differ in their first axis");
    shapes_[i] = bottom[i]->shape();
    top[i]->Reshape(shapes_[i]);
  }
  selected_.reserve(num);
}

void FilterLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Blob& selector = *bottom[selector_index_];
  const float* keep = selector.cpu_data();
  selected_.clear();
  for (int64_t n = 0; n < selector.shape(0); ++n) {
    if (keep[n] != 0) selected_.push_back(n);
  }
  for (int i = 0; i < selector_index_; ++i) {
    shapes_[i][0] = static_cast<int64_t>(selected_.size());
    top[i]->Reshape(shapes_[i]);
    const int64_t inner = bottom[i]->count(1);
    const float* x = bottom[i]->cpu_data();
    float* y = top[i]->mutable_cpu_data();
    for (size_t k = 0; k < selected_.size(); ++k)
      Copy(inner, x + selected_[k] * inner, y + k * inner);
  }
}

void FilterLayer::Backward_cpu(const std::vector<Blob*>& top,
                               const std::vector<bool>& propagate_down,
                               const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, selector_index_, "its selector (the last bottom)");
  for (int i = 0; i < selector_index_; ++i) {
    if (!propagate_down[i]) continue;
    const int64_t inner = bottom[i]->count(1);
    const float* dy = top[i]->cpu_diff();
    float* dx = bottom[i]->mutable_cpu_diff();
    Set(bottom[i]->count(), 0.0f, dx);
    for (size_t k = 0; k < selected_.size(); ++k)
      Copy(inner, dy + k * inner, dx + selected_[k] * inner);
  }
}

DEMI_REGISTER_LAYER(Filter);

}  // namespace demi
