#include "demi/layers/slice_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/layers/part_copy.hpp"

namespace demi {

void SliceLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const SliceParameter& param = layer_param_.slice_param();
  DEMI_CHECK(!(param.has_axis() && param.has_slice_dim()), "Slice layer '", layer_param_.name(),
             "' sets both slice_param.axis and the legacy slice_dim; give only one");
  DEMI_CHECK(
      param.slice_point_size() == 0 || param.slice_point_size() == static_cast<int>(top.size()) - 1,
      "Slice layer '", layer_param_.name(), "' has ", param.slice_point_size(),
      " slice_point values for ", top.size(), " tops; it needs ", top.size() - 1);
}

void SliceLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  const SliceParameter& param = layer_param_.slice_param();
  // slice_dim is unsigned and counts from the front only.
  const bool legacy = param.has_slice_dim();
  axis_ = CanonicalAxis(*this, *bottom[0],
                        legacy ? static_cast<int64_t>(param.slice_dim()) : param.axis(),
                        legacy ? "slice_param.slice_dim" : "slice_param.axis");
  for (const Blob* blob : top) {
    DEMI_CHECK(blob != bottom[0], "Slice layer '", name, "' cannot run in place");
  }
  const int64_t dim = bottom[0]->shape(axis_);
  const int64_t num_tops = static_cast<int64_t>(top.size());
  std::vector<int64_t> top_shape = bottom[0]->shape();
  if (param.slice_point_size() == 0) {
    DEMI_CHECK(dim % num_tops == 0, "Slice layer '", name, "': ", num_tops,
               " tops do not evenly divide axis ", axis_, " of bottom shape ",
               bottom[0]->shape_string(), "; give slice_point");
    top_shape[axis_] = dim / num_tops;
    for (Blob* blob : top) blob->Reshape(top_shape);
  } else {
    int64_t previous = 0;
    for (int i = 0; i <= param.slice_point_size(); ++i) {
      const bool last = i == param.slice_point_size();
      const int64_t point = last ? dim : static_cast<int64_t>(param.slice_point(i));
      DEMI_CHECK(last || (point > previous && point <= dim), "Slice layer '", name,
                 "': slice_point ", i, " = ", point, " must exceed the previous cut ", previous,
                 " and not pass ", dim, ", the size of axis ", axis_, " of bottom shape ",
                 bottom[0]->shape_string());
      top_shape[axis_] = point - previous;
      top[i]->Reshape(top_shape);
      previous = point;
    }
  }
  if (top.size() == 1) {
    top[0]->ShareData(*bottom[0]);
    top[0]->ShareDiff(*bottom[0]);
  }
}

void SliceLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (top.size() == 1) return;  // the top is a view of the bottom
  ScatterParts(context_.device, axis_, BlobField::kData, *bottom[0], top,
               std::vector<bool>(top.size(), true));
}

void SliceLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                  const std::vector<bool>& propagate_down,
                                  const std::vector<Blob*>& bottom) {
  if (!propagate_down[0] || top.size() == 1) return;  // one top: the diff is shared
  GatherParts(context_.device, axis_, BlobField::kDiff, top, bottom[0]);
}

DEMI_REGISTER_LAYER(Slice);

}  // namespace demi
