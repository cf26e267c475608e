// The weights of a net: shared with another net, copied from a
// .caffemodel (by layer name, as Caffe fine-tunes), written to a NetParameter.
#include <algorithm>
#include <set>

#include "demi/hdf5_snapshots.hpp"
#include "demi/net.hpp"
#include "demi/weights_file.hpp"

namespace demi {

namespace {

/// Whether params [begin, end) of layer `layer_id` are all shared, owned by
/// another layer's (a weights file may leave them out, as Caffe's HDF5 does).
bool ParamsShared(const Net& net, int layer_id, int begin, int end) {
  const auto& indices = net.param_layer_indices();
  for (size_t id = 0; id < indices.size(); ++id) {
    const auto& [layer, param] = indices[id];
    if (layer == layer_id && param >= begin && param < end && net.param_owners()[id] < 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

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
  // Every param now reads the other net's data: this net's block is dead
  // weight (a model's size per test net), so it goes.
  if (param_block_.data().ReleaseIfUnused()) {
    VLOG(1) << "net '" << name_ << "' shares all its params' data; released its own block";
  }
}

std::vector<std::string> Net::CopyTrainedLayersFrom(const NetParameter& param) {
  std::vector<std::string> copied;
  for (const LayerParameter& source : param.layer()) {
    if (!has_layer(source.name())) {
      LOG(INFO) << "Ignoring source layer " << source.name();  // Caffe's line
      continue;
    }
    const int layer_id = layer_index_.at(source.name());
    auto& target = layers_[layer_id]->blobs();
    DEMI_CHECK(
        static_cast<int>(target.size()) == source.blobs_size() ||
            (static_cast<int>(target.size()) > source.blobs_size() && source.blobs_size() > 0 &&
             ParamsShared(*this, layer_id, source.blobs_size(), static_cast<int>(target.size()))),
        "layer '", source.name(), "' has ", target.size(), " params but the weights file holds ",
        source.blobs_size());
    for (size_t j = 0; j < target.size() && static_cast<int>(j) < source.blobs_size(); ++j) {
      if (IsAbsentParam(source.blobs(static_cast<int>(j)))) {
        // Caffe writes a shared param under its owner only.
        DEMI_CHECK(ParamsShared(*this, layer_id, static_cast<int>(j), static_cast<int>(j) + 1),
                   "the weights file holds no param ", j, " of layer '", source.name(),
                   "', which owns it");
        continue;
      }
      DEMI_CHECK(target[j]->ShapeEquals(source.blobs(static_cast<int>(j))), "cannot copy param ", j,
                 " of layer '", source.name(), "': the weights file has shape ",
                 ShapeString(ShapeFromProto(source.blobs(static_cast<int>(j)))),
                 ", the net has shape ", target[j]->shape_string());
      target[j]->FromProto(source.blobs(static_cast<int>(j)), false);
    }
    if (!target.empty()) copied.push_back(source.name());
  }
  return copied;
}

void Net::CheckWeightsMatch(const std::string& path, const NetParameter& weights,
                            const std::vector<std::string>& copied) const {
  if (!copied.empty()) return;
  std::string with_params;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i]->blobs().empty()) continue;
    with_params += (with_params.empty() ? "" : ", ") + layer_names_[i];
  }
  if (with_params.empty()) return;  // nothing here takes weights
  std::string in_file;
  for (const LayerParameter& layer : weights.layer()) {
    if (layer.blobs_size() == 0) continue;
    in_file += (in_file.empty() ? "" : ", ") + layer.name();
  }
  ThrowError(StrCat("the weights in '", path, "' match no layer of net '", name_,
                    "': it has params in layers [", with_params, "], the file in layers [", in_file,
                    "]; is it the model of another net?"));
}

std::string Net::LayersWithoutWeights(const std::set<std::string>& fed) const {
  std::string missing;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i]->blobs().empty() || fed.count(layer_names_[i])) continue;
    missing += (missing.empty() ? "" : ", ") + layer_names_[i];
  }
  return missing;
}

void Net::WarnLayersWithoutWeights(const std::set<std::string>& fed) const {
  const std::string missing = LayersWithoutWeights(fed);
  if (missing.empty()) return;
  LOG(WARNING) << "No weights for layer(s) " << missing << " of net '" << name_
               << "': they keep their initial values";
}

void Net::CopyTrainedLayersFrom(const std::vector<std::string>& paths) {
  std::set<std::string> fed;
  for (const std::string& path : paths) {
    const NetParameter weights = ReadWeightsFile(path);
    LOG(INFO) << "Copying weights from " << path;
    std::vector<std::string> copied;
    try {
      copied = CopyTrainedLayersFrom(weights);
    } catch (const Error& error) {
      ThrowError(StrCat("cannot copy weights from '", path, "': ", error.what()));
    }
    CheckWeightsMatch(path, weights, copied);
    fed.insert(copied.begin(), copied.end());
  }
  WarnLayersWithoutWeights(fed);
}

void Net::CopyTrainedLayersFrom(const std::string& path) {
  CopyTrainedLayersFrom(std::vector<std::string>{path});
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
