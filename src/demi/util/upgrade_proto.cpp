#include "demi/util/upgrade_proto.hpp"

#include "demi/common.hpp"
#include "demi/util/io.hpp"
#include "demi/util/upgrade_v0.hpp"
#include "demi/util/upgrade_v1.hpp"

namespace demi {

bool NetNeedsInputUpgrade(const NetParameter& param) { return param.input_size() > 0; }

void UpgradeNetInput(NetParameter* param) {
  const bool has_shape = param->input_shape_size() > 0;
  const bool has_dim = param->input_dim_size() > 0;
  DEMI_CHECK(!(has_shape && has_dim), "net '", param->name(),
             "' gives both input_shape and input_dim");
  if (has_shape) {
    DEMI_CHECK(param->input_shape_size() == 1 || param->input_shape_size() == param->input_size(),
               "net '", param->name(), "' has ", param->input_size(), " inputs but ",
               param->input_shape_size(), " input_shape entries");
  }
  if (has_dim) {
    DEMI_CHECK(param->input_dim_size() == 4 * param->input_size(), "net '", param->name(), "' has ",
               param->input_size(), " inputs but ", param->input_dim_size(),
               " input_dim values (4 per input expected)");
  }
  LayerParameter input;
  input.set_name("input");
  input.set_type("Input");
  for (int i = 0; i < param->input_size(); ++i) {
    input.add_top(param->input(i));
    BlobShape* shape = input.mutable_input_param()->add_shape();
    if (has_shape) {
      shape->CopyFrom(param->input_shape(param->input_shape_size() == 1 ? 0 : i));
    } else if (has_dim) {
      for (int d = 0; d < 4; ++d) shape->add_dim(param->input_dim(4 * i + d));
    }
  }
  // Prepend the Input layer.
  NetParameter upgraded(*param);
  upgraded.clear_layer();
  upgraded.clear_input();
  upgraded.clear_input_shape();
  upgraded.clear_input_dim();
  upgraded.add_layer()->CopyFrom(input);
  for (const LayerParameter& layer : param->layer()) upgraded.add_layer()->CopyFrom(layer);
  param->Swap(&upgraded);
}

namespace {

/// Whether `source` (a DataParameter or ImageDataParameter) carries any of
/// the old transformation fields; with `into`, moves them there.
template <typename SourceParam>
bool MoveTransformation(SourceParam* source, TransformationParameter* into) {
  const bool has_any = source->has_scale() || source->has_mean_file() || source->has_crop_size() ||
                       source->has_mirror();
  if (!into || !has_any) return has_any;
  if (source->has_scale()) into->set_scale(source->scale());
  if (source->has_mean_file()) into->set_mean_file(source->mean_file());
  if (source->has_crop_size()) into->set_crop_size(source->crop_size());
  if (source->has_mirror()) into->set_mirror(source->mirror());
  source->clear_scale();
  source->clear_mean_file();
  source->clear_crop_size();
  source->clear_mirror();
  return true;
}

}  // namespace

bool NetNeedsDataTransformationUpgrade(const NetParameter& param) {
  for (LayerParameter layer : param.layer()) {
    if (MoveTransformation(layer.mutable_data_param(), nullptr) ||
        MoveTransformation(layer.mutable_image_data_param(), nullptr)) {
      return true;
    }
  }
  return false;
}

void UpgradeNetDataTransformation(NetParameter* param) {
  for (LayerParameter& layer : *param->mutable_layer()) {
    if (layer.has_data_param()) {
      MoveTransformation(layer.mutable_data_param(), layer.mutable_transform_param());
    }
    if (layer.has_image_data_param()) {
      MoveTransformation(layer.mutable_image_data_param(), layer.mutable_transform_param());
    }
  }
}

bool UpgradeNetAsNeeded(const std::string& source, NetParameter* param) {
  bool changed = false;
  if (NetNeedsV0Upgrade(*param)) {
    LOG(INFO) << source << ": upgrading V0 layers (and padding layers) to the V1 format";
    UpgradeV0Net(*param, param);
    changed = true;
  }
  if (NetNeedsV1Upgrade(*param)) {
    LOG(INFO) << source << ": upgrading legacy V1 layers to the current format";
    UpgradeV1Net(*param, param);
    changed = true;
  }
  if (NetNeedsDataTransformationUpgrade(*param)) {
    LOG(INFO) << source << ": moving old data-layer transformation fields into transform_param";
    UpgradeNetDataTransformation(param);
    changed = true;
  }
  if (NetNeedsInputUpgrade(*param)) {
    LOG(INFO) << source << ": moving legacy top-level inputs into an Input layer";
    UpgradeNetInput(param);
    changed = true;
  }
  return changed;
}

void ReadNetParamsFromTextFile(const std::string& path, NetParameter* param) {
  ReadProtoFromTextFile(path, param);
  UpgradeNetAsNeeded(path, param);
}

void ReadNetParamsFromBinaryFile(const std::string& path, NetParameter* param) {
  ReadProtoFromBinaryFile(path, param);
  UpgradeNetAsNeeded(path, param);
}

}  // namespace demi
