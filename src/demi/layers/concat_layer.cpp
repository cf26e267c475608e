#include "demi/layers/concat_layer.hpp"

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
  GatherParts(context_.device, axis_, BlobField::kData, bottom, top[0], ChannelsLast(*top[0]));
}

void ConcatLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                   const std::vector<bool>& propagate_down,
                                   const std::vector<Blob*>& bottom) {
  if (bottom.size() == 1) return;  // the bottom's diff is the top's
  ScatterParts(context_.device, axis_, BlobField::kDiff, *top[0], bottom, propagate_down,
               ChannelsLast(*top[0]));
}

bool ConcatLayer::ChannelsLast(const Blob& whole) const {
  // The whole says. Its parts share its layout (kUniform), but for a part
  // of one channel or one pixel, which keeps Caffe's, the same bytes; and a
  // whole of one pixel or channel has parts of the same bytes either way.
  // (A part of 16 channels in a net blocked by 16 reads as channels last
  // too: its own layout cannot say.)
  return axis_ == 1 && whole.channels_last();
}

DEMI_REGISTER_LAYER(Concat);

}  // namespace demi
