#include "demi/layers/concat_layer.hpp"

#include <algorithm>

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/layers/part_copy.hpp"

namespace demi {

void ConcatLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ConcatParameter& param = layer_param_.concat_param();
  DEMI_CHECK(!(param.has_axis() && param.has_concat_dim()), "Concat layer '", layer_param_.name(),
             "' sets both concat_param.axis and the legacy concat_dim; ", "give only one");
}

void ConcatLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  const ConcatParameter& param = layer_param_.concat_param();
  // concat_dim is unsigned and counts from the front only.
  const bool legacy = param.has_concat_dim();
  axis_ = CanonicalAxis(*this, *bottom[0],
                        legacy ? static_cast<int64_t>(param.concat_dim()) : param.axis(),
                        legacy ? "concat_param.concat_dim" : "concat_param.axis");
  const int num_axes = bottom[0]->num_axes();
  std::vector<int64_t> top_shape = bottom[0]->shape();
  for (size_t i = 1; i < bottom.size(); ++i) {
    bool match = bottom[i]->num_axes() == num_axes;
    for (int j = 0; match && j < num_axes; ++j) {
      match = j == axis_ || bottom[i]->shape(j) == top_shape[j];
    }
    DEMI_CHECK(match, "Concat layer '", name, "': bottom ", i, " of shape ",
               bottom[i]->shape_string(), " does not match bottom 0 of shape ",
               bottom[0]->shape_string(), " on the axes other than the concat axis ", axis_);
    top_shape[axis_] += bottom[i]->shape(axis_);
  }
  for (const Blob* blob : bottom) {
    DEMI_CHECK(blob != top[0], "Concat layer '", name, "' cannot run in place");
  }
  top[0]->Reshape(top_shape);
  if (bottom.size() == 1) {
    top[0]->ShareData(*bottom[0]);
    top[0]->ShareDiff(*bottom[0]);
  }
}

void ConcatLayer::ForwardOnDevice(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  if (bottom.size() == 1) return;  // the top is a view of the bottom
  GatherParts(context_.device, axis_, BlobField::kData, bottom, top[0], ChannelsLast(bottom, top));
}

void ConcatLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob*>& bottom) {
  if (bottom.size() == 1) return;  // the bottom's diff is the top's
  ScatterParts(context_.device, axis_, BlobField::kDiff, *top[0], bottom, propagate_down,
               ChannelsLast(bottom, top));
}

bool ConcatLayer::ChannelsLast(const std::vector<Blob*>& bottom,
                               const std::vector<Blob*>& top) const {
  // A part of one channel (or every blob of one pixel) keeps Caffe's layout,
  // the same bytes: the others say. On a CPU the whole says: a blob of 16
  // channels in blocks of 16 (a blocked net's part) is channels last too.
  const auto last = [](const Blob* blob) { return blob->channels_last(); };
  if (axis_ != 1) return false;
  if (context_.device == Device::kCPU) return last(top[0]);
  return last(top[0]) || std::any_of(bottom.begin(), bottom.end(), last);
}

DEMI_REGISTER_LAYER(Concat);

}  // namespace demi
