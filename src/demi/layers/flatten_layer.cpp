#include "demi/layers/flatten_layer.hpp"

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"

namespace demi {

void FlattenLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  CheckNotInPlace(bottom, top);
  const FlattenParameter& param = layer_param_.flatten_param();
  const int start = CanonicalAxis(*this, *bottom[0], param.axis(), "flatten_param.axis");
  const int end = CanonicalAxis(*this, *bottom[0], param.end_axis(), "flatten_param.end_axis");
  DEMI_CHECK(start <= end, "Flatten layer '", name, "': axis ", param.axis(),
             " comes after end_axis ", param.end_axis(), " for bottom shape ",
             bottom[0]->shape_string());
  const std::vector<int64_t>& shape = bottom[0]->shape();
  std::vector<int64_t> top_shape(shape.begin(), shape.begin() + start);
  top_shape.push_back(bottom[0]->count(start, end + 1));
  top_shape.insert(top_shape.end(), shape.begin() + end + 1, shape.end());
  ShareAs(top_shape, bottom, top);
}

DEMI_REGISTER_LAYER(Flatten);

}  // namespace demi
