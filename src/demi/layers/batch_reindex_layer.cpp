#include "demi/layers/batch_reindex_layer.hpp"

#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

void BatchReindexLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  DEMI_CHECK(bottom[0]->num_axes() >= 1 && bottom[1]->num_axes() == 1, "BatchReindex layer '",
             layer_param_.name(), "' needs data of at least 1 axis and 1-D indices, got data ",
             bottom[0]->shape_string(), " and indices ", bottom[1]->shape_string());
  std::vector<int64_t> top_shape = bottom[0]->shape();
  top_shape[0] = bottom[1]->shape(0);
  top[0]->Reshape(top_shape);
}

int64_t BatchReindexLayer::CheckedItem(float index, int64_t i, const Blob& data) const {
  DEMI_CHECK(index >= 0 && index < static_cast<float>(data.shape(0)) && index == std::floor(index),
             "BatchReindex layer '", layer_param_.name(), "': index ", index, " at position ", i,
             " is not an item of data ", data.shape_string());
  return static_cast<int64_t>(index);
}

void BatchReindexLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                    const std::vector<Blob*>& top) {
  const int64_t inner = bottom[0]->count(1);
  const float* x = bottom[0]->cpu_data();
  const float* index = bottom[1]->cpu_data();
  float* y = top[0]->mutable_cpu_data();
  for (int64_t i = 0; i < bottom[1]->count(); ++i) {
    Copy(inner, x + CheckedItem(index[i], i, *bottom[0]) * inner, y + i * inner);
  }
}

void BatchReindexLayer::Backward_cpu(const std::vector<Blob*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob*>& bottom) {
  RefuseGradient(propagate_down, 1, "its indices");
  if (!propagate_down[0]) return;
  const int64_t inner = bottom[0]->count(1);
  const float* index = bottom[1]->cpu_data();
  const float* dy = top[0]->cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  Set(bottom[0]->count(), 0.0f, dx);
  for (int64_t i = 0; i < bottom[1]->count(); ++i) {
    Axpy(inner, 1.0f, dy + i * inner, dx + static_cast<int64_t>(index[i]) * inner);
  }
}

DEMI_REGISTER_LAYER(BatchReindex);

}  // namespace demi
