#include "demi/layers/dummy_data_layer.hpp"

#include "demi/layer_registry.hpp"

namespace demi {

void DummyDataLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const DummyDataParameter& param = layer_param_.dummy_data_param();
  const int num_top = static_cast<int>(top.size());
  const int num_fillers = param.data_filler_size();
  auto count_ok = [num_top](int n) { return n == 0 || n == 1 || n == num_top; };
  DEMI_CHECK(count_ok(num_fillers), "DummyData layer '", layer_param_.name(), "' has ", num_fillers,
             " data_filler entries for ", num_top, " tops; give 0, 1 or one per top");
  const int legacy = param.num_size();
  DEMI_CHECK(legacy == 0 || param.shape_size() == 0, "DummyData layer '", layer_param_.name(),
             "' gives both shape and legacy num/channels/height/width");
  DEMI_CHECK(legacy == param.channels_size() && legacy == param.height_size() &&
                 legacy == param.width_size(),
             "DummyData layer '", layer_param_.name(),
             "' needs as many channels, height and width values as num values");
  const int num_shapes = legacy > 0 ? legacy : param.shape_size();
  DEMI_CHECK(num_shapes == 1 || num_shapes == num_top, "DummyData layer '", layer_param_.name(),
             "' has ", num_shapes, " shapes for ", num_top, " tops; give 1 or one per top");
  fillers_.clear();
  for (int i = 0; i < num_top; ++i) {
    const int s = num_shapes == 1 ? 0 : i;
    if (legacy > 0) {
      top[i]->Reshape(param.num(s), param.channels(s), param.height(s), param.width(s));
    } else {
      top[i]->Reshape(param.shape(s));
    }
    // Unlike an Input a caller fills, nothing ever gives these tops data: an
    // empty one would train on nothing, at a loss of 0.
    DEMI_CHECK(top[i]->count() > 0, "DummyData layer '", layer_param_.name(), "': top ", i,
               " has shape ", top[i]->shape_string(),
               ", which holds no values; give every axis, the batch first, at least 1");
    FillerParameter filler_param;  // constant 0 by default
    if (num_fillers > 0) filler_param = param.data_filler(num_fillers == 1 ? 0 : i);
    fillers_.push_back(GetFiller(filler_param));
  }
}

void DummyDataLayer::Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  for (size_t i = 0; i < top.size(); ++i) fillers_[i]->Fill(top[i], rng());
}

DEMI_REGISTER_LAYER(DummyData);

}  // namespace demi
