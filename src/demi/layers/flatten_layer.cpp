#include "demi/layers/flatten_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

namespace {

/// Maps a possibly negative axis of `blob` to [0, num_axes), or throws an
/// Error naming the layer, the field and the bottom's shape.
int CanonicalAxis(const Blob& blob, int axis, const std::string& layer, const char* field) {
  const int num_axes = blob.num_axes();
  DEMI_CHECK(axis >= -num_axes && axis < num_axes, "Flatten layer '", layer, "': flatten_param.",
             field, " ", axis, " is out of range for bottom shape ", blob.shape_string());
  return axis < 0 ? axis + num_axes : axis;
}

}  // namespace

void FlattenLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  DEMI_CHECK(top[0] != bottom[0], "Flatten layer '", name, "' cannot run in place");
  const FlattenParameter& param = layer_param_.flatten_param();
  const int start = CanonicalAxis(*bottom[0], param.axis(), name, "axis");
  const int end = CanonicalAxis(*bottom[0], param.end_axis(), name, "end_axis");
  DEMI_CHECK(start <= end, "Flatten layer '", name, "': axis ", param.axis(),
             " comes after end_axis ", param.end_axis(), " for bottom shape ",
             bottom[0]->shape_string());
  const std::vector<int64_t>& shape = bottom[0]->shape();
  std::vector<int64_t> top_shape(shape.begin(), shape.begin() + start);
  top_shape.push_back(bottom[0]->count(start, end + 1));
  top_shape.insert(top_shape.end(), shape.begin() + end + 1, shape.end());
  top[0]->Reshape(top_shape);
  top[0]->ShareData(*bottom[0]);
  top[0]->ShareDiff(*bottom[0]);
}

void FlattenLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  // Reshape made the top a view of the bottom; re-share only if the bottom's
  // memories were replaced since.
  if (top[0]->data() != bottom[0]->data()) top[0]->ShareData(*bottom[0]);
  if (top[0]->diff() != bottom[0]->diff()) top[0]->ShareDiff(*bottom[0]);
}

void FlattenLayer::Backward_cpu(const std::vector<Blob*>& top,
                                const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  // The bottom's diff is the top's diff: the gradient is already in place.
}

DEMI_REGISTER_LAYER(Flatten);

}  // namespace demi
