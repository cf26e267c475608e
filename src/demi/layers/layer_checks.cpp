#include "demi/layers/layer_checks.hpp"

#include <cmath>
#include <cstdint>

namespace demi {

int CanonicalAxis(const Layer& layer, const Blob& blob, int64_t axis, const char* field,
                  const char* what) {
  const int num_axes = blob.num_axes();
  DEMI_CHECK(axis >= -num_axes && axis < num_axes, layer.type(), " layer '",
             layer.layer_param().name(), "': ", field, " ", axis, " is out of range for ", what,
             " ", blob.shape_string());
  return static_cast<int>(axis < 0 ? axis + num_axes : axis);
}

std::vector<int64_t> AxesShape(const Layer& layer, const Blob& bottom, int axis, int num_axes,
                               const char* param) {
  const std::string field = std::string(param) + ".axis";
  const int start = CanonicalAxis(layer, bottom, axis, field.c_str());
  const std::string& name = layer.layer_param().name();
  DEMI_CHECK(num_axes >= -1, layer.type(), " layer '", name, "': ", param, ".num_axes ", num_axes,
             " must be >= 0, or -1 for all axes from `axis` on");
  const int end = num_axes == -1 ? bottom.num_axes() : start + num_axes;
  DEMI_CHECK(end <= bottom.num_axes(), layer.type(), " layer '", name, "': axis ", axis,
             " + num_axes ", num_axes, " reaches past the end of bottom 0 of shape ",
             bottom.shape_string());
  return std::vector<int64_t>(bottom.shape().begin() + start, bottom.shape().begin() + end);
}

int OperandAxis(const Layer& layer, const Blob& bottom, const Blob& operand, int axis,
                const char* param, const char* what, bool from_bottom) {
  const std::string field = std::string(param) + ".axis";
  // A scalar operand applies from axis 0, whatever the axis param says.
  const int start = operand.num_axes() == 0 ? 0 : CanonicalAxis(layer, bottom, axis, field.c_str());
  bool match = start + operand.num_axes() <= bottom.num_axes();
  for (int i = 0; match && i < operand.num_axes(); ++i) {
    match = bottom.shape(start + i) == operand.shape(i);
  }
  DEMI_CHECK(match, layer.type(), " layer '", layer.layer_param().name(), "': ", what, " of shape ",
             operand.shape_string(), from_bottom ? " (bottom 1)" : " (param)",
             " does not match bottom 0 of shape ", bottom.shape_string(), " from axis ", start);
  return start;
}

void CheckCaffeLayoutOnGpu(const Layer& layer, const Blob& bottom, const Blob& top) {
  DEMI_CHECK(!bottom.channels_last() && !top.channels_last(), layer.type(), " layer '",
             layer.layer_param().name(), "': its CUDA kernels read Caffe's layout, but its ",
             bottom.channels_last() ? "bottom " : "top ",
             (bottom.channels_last() ? bottom : top).shape_string(),
             " is channels last (set channels_last: false in the net to run it)");
}

void CheckClassLabel(const Layer& layer, int64_t value, int64_t index, int64_t classes,
                     const Blob& scores) {
  CheckClassLabel(layer, value, index, classes, scores.shape());
}

void CheckClassLabel(const Layer& layer, int64_t value, int64_t index, int64_t classes,
                     const std::vector<int64_t>& scores_shape) {
  // ClassLabel's mark for a float that is no integer at all.
  DEMI_CHECK(value != INT64_MIN, layer.type(), " layer '", layer.layer_param().name(),
             "': the label at index ", index, " is NaN, infinite or past int64's range, not a ",
             "class in [0, ", classes, ") for scores ", ShapeString(scores_shape));
  DEMI_CHECK(value >= 0 && value < classes, layer.type(), " layer '", layer.layer_param().name(),
             "': label ", value, " at index ", index, " is outside [0, ", classes, ") for scores ",
             ShapeString(scores_shape));
}

int64_t WholeClassLabel(const Layer& layer, float label, int64_t index, int64_t classes,
                        const Blob& scores) {
  DEMI_CHECK(label >= 0 && label < static_cast<float>(classes) && label == std::floor(label),
             layer.type(), " layer '", layer.layer_param().name(), "': label ", label, " at index ",
             index, " is not a class in [0, ", classes, ") for scores ", scores.shape_string());
  return static_cast<int64_t>(label);
}

}  // namespace demi
