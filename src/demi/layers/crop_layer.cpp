#include "demi/layers/crop_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/math.hpp"

namespace demi {

void CropLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const CropParameter& param = layer_param_.crop_param();
  const Blob& a = *bottom[0];
  const Blob& b = *bottom[1];
  const int num_axes = a.num_axes();
  DEMI_CHECK(num_axes == b.num_axes(), "Crop layer '", layer_param_.name(), "': bottoms ",
             a.shape_string(), " and ", b.shape_string(), " differ in their number of axes");
  const int start = CanonicalAxis(*this, a, param.axis(), "crop_param.axis");
  const int cropped = num_axes - start;
  DEMI_CHECK(param.offset_size() <= 1 || param.offset_size() == cropped, "Crop layer '",
             layer_param_.name(), "' gives ", param.offset_size(), " offsets; cropping bottom ",
             a.shape_string(), " from axis ", start, " takes 0, 1 or ", cropped);
  offsets_.assign(num_axes, 0);
  strides_.resize(num_axes);
  std::vector<int64_t> top_shape = a.shape();
  for (int i = 0; i < num_axes; ++i) {
    strides_[i] = a.count(i + 1);
    if (i < start) continue;
    if (param.offset_size() > 0)
      offsets_[i] = param.offset(param.offset_size() == 1 ? 0 : i - start);
    top_shape[i] = b.shape(i);
    DEMI_CHECK(offsets_[i] + b.shape(i) <= a.shape(i), "Crop layer '", layer_param_.name(),
               "': a crop of ", b.shape(i), " at offset ", offsets_[i], " on axis ", i,
               " does not fit bottom ", a.shape_string(), " (reference ", b.shape_string(), ")");
  }
  top[0]->Reshape(top_shape);
}

int64_t CropLayer::SourceOffset(int64_t row, const Blob& top) const {
  const int last = top.num_axes() - 1;
  int64_t offset = offsets_[last];
  for (int axis = last - 1; axis >= 0; --axis) {
    const int64_t index = row % top.shape(axis);
    row /= top.shape(axis);
    offset += (index + offsets_[axis]) * strides_[axis];
  }
  return offset;
}

void CropLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Blob& y = *top[0];
  const int64_t row_length = y.shape(-1);
  const int64_t rows = y.count(0, y.num_axes() - 1);
  const float* x = bottom[0]->cpu_data();
  float* out = top[0]->mutable_cpu_data();
  for (int64_t row = 0; row < rows; ++row) {
    Copy(row_length, x + SourceOffset(row, y), out + row * row_length);
  }
}

void CropLayer::Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                             const std::vector<Blob*>& bottom) {
  if (propagate_down[1]) Set(bottom[1]->count(), 0.0f, bottom[1]->mutable_cpu_diff());
  if (!propagate_down[0]) return;
  const Blob& y = *top[0];
  const int64_t row_length = y.shape(-1);
  const int64_t rows = y.count(0, y.num_axes() - 1);
  const float* dy = y.cpu_diff();
  float* dx = bottom[0]->mutable_cpu_diff();
  Set(bottom[0]->count(), 0.0f, dx);
  for (int64_t row = 0; row < rows; ++row) {
    Copy(row_length, dy + row * row_length, dx + SourceOffset(row, y));
  }
}

DEMI_REGISTER_LAYER(Crop);

}  // namespace demi
