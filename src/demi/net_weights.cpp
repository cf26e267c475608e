// The weights of a net: shared with another net, copied from a
// .caffemodel (by layer name, as Caffe fine-tunes), written to a NetParameter.
#include <set>

#include "demi/net.hpp"
#include "demi/util/upgrade_proto.hpp"

namespace demi {

void Net::ShareTrainedLayersWith(const Net& other) {
  for (size_t i = 0; i < other.layers_.size(); ++i) {
    const std::string& name = other.layer_names_[i];
    if (!has_layer(name)) continue;
    auto& target = layers_[layer_index_.at(name)]->blobs();
    const auto& source = other.layers_[i]->blobs();
    DEMI_CHECK(target.size() == source.size(), "layer '", name, "' has ", target.size(),
               " params here but ", source.size(), " in the net it shares with");
    for (size_t j = 0; j < target.size(); ++j) {
      DEMI_CHECK(target[j]->shape() == source[j]->shape(), "cannot share param ", j, " of layer '",
                 name, "': shape ", target[j]->shape_string(), " here vs ",
                 source[j]->shape_string(), " in the source net");
      target[j]->ShareData(*source[j]);
    }
  }
}

void Net::CopyTrainedLayersFrom(const NetParameter& param) {
  std::set<std::string> copied;
  for (const LayerParameter& source : param.layer()) {
    if (!has_layer(source.name())) {
      VLOG(1) << "Ignoring source layer " << source.name();
      continue;
    }
    auto& target = layers_[layer_index_.at(source.name())]->blobs();
    DEMI_CHECK(static_cast<int>(target.size()) == source.blobs_size(), "layer '", source.name(),
               "' has ", target.size(), " params but the weights file holds ", source.blobs_size());
    for (size_t j = 0; j < target.size(); ++j) {
      DEMI_CHECK(target[j]->ShapeEquals(source.blobs(static_cast<int>(j))), "cannot copy param ", j,
                 " of layer '", source.name(), "': the weights file has shape ",
                 ShapeString(ShapeFromProto(source.blobs(static_cast<int>(j)))),
                 ", the net has shape ", target[j]->shape_string());
      target[j]->FromProto(source.blobs(static_cast<int>(j)), false);
    }
    copied.insert(source.name());
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (!layers_[i]->blobs().empty() && !copied.count(layer_names_[i])) {
      LOG(INFO) << "Layer " << layer_names_[i]
                << " is not in the weights; keeping its initial values";
    }
  }
}

void Net::CopyTrainedLayersFrom(const std::string& path) {
  NetParameter param;
  ReadNetParamsFromBinaryFile(path, &param);
  LOG(INFO) << "Copying weights from " << path;
  CopyTrainedLayersFrom(param);
}

void Net::ToProto(NetParameter* param, bool write_diff) const {
  param->Clear();
  param->set_name(name_);
  for (const auto& layer : layers_) {
    // Inserted splits are an implementation detail of this net, not the model.
    if (inserted_split_.count(layer->layer_param().name())) continue;
    layer->ToProto(param->add_layer(), write_diff);
  }
}

}  // namespace demi
