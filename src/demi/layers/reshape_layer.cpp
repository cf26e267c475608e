#include "demi/layers/reshape_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

namespace {

/// The dimensions of reshape_param.shape as written, e.g. "[0 -1 4]".
std::string DimsString(const BlobShape& shape) {
  std::string out = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    out += (i ? " " : "") + std::to_string(shape.dim(i));
  }
  return out + "]";
}

}  // namespace

void ReshapeLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const BlobShape& shape = layer_param_.reshape_param().shape();
  copy_axes_.clear();
  inferred_axis_ = -1;
  constant_count_ = 1;
  for (int i = 0; i < shape.dim_size(); ++i) {
    const int64_t dim = shape.dim(i);
    DEMI_CHECK(dim >= -1, "Reshape layer '", layer_param_.name(), "': reshape_param.shape ",
               DimsString(shape), " has dimension ", dim, "; use 0 to copy, -1 to infer");
    if (dim == 0) {
      copy_axes_.push_back(i);
    } else if (dim == -1) {
      DEMI_CHECK(inferred_axis_ < 0, "Reshape layer '", layer_param_.name(),
                 "': reshape_param.shape ", DimsString(shape),
                 " has more than one -1; at most one dimension can be inferred");
      inferred_axis_ = i;
    } else {
      constant_count_ *= dim;
    }
  }
}

void ReshapeLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  CheckNotInPlace(bottom, top);
  const ReshapeParameter& param = layer_param_.reshape_param();
  const std::vector<int64_t>& bottom_shape = bottom[0]->shape();
  const int bottom_axes = bottom[0]->num_axes();
  // A negative axis counts from the end, -1 being the position after the last.
  const int start = param.axis() >= 0 ? param.axis() : bottom_axes + param.axis() + 1;
  DEMI_CHECK(start >= 0 && start <= bottom_axes, "Reshape layer '", name, "': reshape_param.axis ",
             param.axis(), " is out of range for bottom shape ", bottom[0]->shape_string());
  DEMI_CHECK(param.num_axes() >= -1, "Reshape layer '", name, "': reshape_param.num_axes ",
             param.num_axes(), " must be >= 0, or -1 for all axes from `axis` on");
  const int end = param.num_axes() == -1 ? bottom_axes : start + param.num_axes();
  DEMI_CHECK(end <= bottom_axes, "Reshape layer '", name, "': axis ", param.axis(), " + num_axes ",
             param.num_axes(), " reaches past the end of bottom shape ", bottom[0]->shape_string());

  const std::vector<int64_t> new_dims = ShapeFromProto(param.shape());
  std::vector<int64_t> top_shape(bottom_shape.begin(), bottom_shape.begin() + start);
  top_shape.insert(top_shape.end(), new_dims.begin(), new_dims.end());
  top_shape.insert(top_shape.end(), bottom_shape.begin() + end, bottom_shape.end());
  for (int copy : copy_axes_) {
    const int axis = start + copy;
    DEMI_CHECK(axis < bottom_axes, "Reshape layer '", name, "': reshape_param.shape ",
               DimsString(param.shape()), " has a 0 at position ", copy, ", but bottom shape ",
               bottom[0]->shape_string(), " has no axis ", axis, " to copy");
    top_shape[axis] = bottom_shape[axis];
  }
  if (inferred_axis_ >= 0) {
    int64_t explicit_count = constant_count_ * bottom[0]->count(0, start) * bottom[0]->count(end);
    for (int copy : copy_axes_) explicit_count *= top_shape[start + copy];
    DEMI_CHECK(explicit_count != 0 && bottom[0]->count() % explicit_count == 0, "Reshape layer '",
               name, "': cannot infer the -1 in reshape_param.shape ", DimsString(param.shape()),
               ": bottom shape ", bottom[0]->shape_string(),
               " has a count not divisible by the other dimensions' product ", explicit_count);
    top_shape[start + inferred_axis_] = bottom[0]->count() / explicit_count;
  }
  int64_t top_count = 1;
  for (int64_t dim : top_shape) top_count *= dim;
  DEMI_CHECK(top_count == bottom[0]->count(), "Reshape layer '", name, "': top shape ",
             ShapeString(top_shape), " and bottom shape ", bottom[0]->shape_string(),
             " differ in count");
  ShareAs(top_shape, bottom, top);
}

DEMI_REGISTER_LAYER(Reshape);

}  // namespace demi
