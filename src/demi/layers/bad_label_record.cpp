#include "demi/layers/bad_label_record.hpp"

#include "demi/layers/layer_checks.hpp"

namespace demi {

#ifndef CPU_ONLY
unsigned long long* BadLabelRecord::gpu() {
  if (record_.size() == 0) {
    record_.Resize(sizeof(unsigned long long));
    *static_cast<unsigned long long*>(record_.mutable_cpu_data()) = kNone;
  }
  return static_cast<unsigned long long*>(record_.mutable_gpu_data());
}
#endif

void BadLabelRecord::Raise(const Layer& layer, int64_t classes,
                           const std::vector<int64_t>& scores_shape) {
  if (record_.size() == 0) return;  // no Forward on a GPU yet
  const auto packed = *static_cast<const unsigned long long*>(record_.cpu_data());
  if (packed == kNone) return;
  *static_cast<unsigned long long*>(record_.mutable_cpu_data()) = kNone;
  const auto index = static_cast<int64_t>(packed >> 32);
  const auto value = static_cast<int64_t>(static_cast<int32_t>(packed & 0xffffffffu));
  CheckClassLabel(layer, value, index, classes, scores_shape);
  // A label clamped to 32 bits may look like a class: still an error.
  ThrowError(StrCat(layer.type(), " layer '", layer.layer_param().name(), "': a label at index ",
                    index, " is outside [0, ", classes, ") for scores ",
                    ShapeString(scores_shape)));
}

}  // namespace demi
