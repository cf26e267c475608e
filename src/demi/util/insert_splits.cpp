#include "demi/util/insert_splits.hpp"

#include <map>
#include <utility>

#include "demi/common.hpp"

namespace demi {

namespace {

using BlobSource = std::pair<int, int>;  // (producing layer, top index); -1 for none

}  // namespace

std::string SplitLayerName(const std::string& layer_name, const std::string& blob_name,
                           int blob_index) {
  return StrCat(blob_name, "_", layer_name, "_", blob_index, "_split");
}

std::string SplitBlobName(const std::string& layer_name, const std::string& blob_name,
                          int blob_index, int split_index) {
  return StrCat(SplitLayerName(layer_name, blob_name, blob_index), "_", split_index);
}

void InsertSplits(const NetParameter& in, NetParameter* out) {
  out->CopyFrom(in);
  out->clear_layer();
  // Pass 1: for every top, count its readers; remember the latest producer of
  // each blob name (in-place layers re-produce a name) and each top's loss.
  std::map<std::string, BlobSource> latest_source;
  std::map<BlobSource, int> reader_count;
  std::map<BlobSource, float> loss_weight;
  std::map<std::pair<int, int>, BlobSource> bottom_source;  // (layer, bottom) -> source
  for (int i = 0; i < in.layer_size(); ++i) {
    const LayerParameter& layer = in.layer(i);
    for (int j = 0; j < layer.bottom_size(); ++j) {
      auto it = latest_source.find(layer.bottom(j));
      if (it == latest_source.end()) continue;  // the net reports unknown bottoms
      bottom_source[{i, j}] = it->second;
      ++reader_count[it->second];
    }
    for (int j = 0; j < layer.top_size(); ++j) {
      latest_source[layer.top(j)] = {i, j};
      if (j < layer.loss_weight_size()) loss_weight[{i, j}] = layer.loss_weight(j);
    }
  }
  auto has_loss = [&](const BlobSource& source) {
    auto it = loss_weight.find(source);
    return it != loss_weight.end() && it->second != 0.0f;
  };
  auto readers = [&](const BlobSource& source) {
    auto it = reader_count.find(source);
    return it == reader_count.end() ? 0 : it->second;
  };
  auto needs_split = [&](const BlobSource& source) {
    return readers(source) > 1 || (readers(source) == 1 && has_loss(source));
  };
  // Pass 2: copy layers, renaming bottoms that read a split blob and adding a
  // Split after each top that needs one.
  std::map<BlobSource, int> readers_seen;
  for (int i = 0; i < in.layer_size(); ++i) {
    LayerParameter* layer = out->add_layer();
    layer->CopyFrom(in.layer(i));
    for (int j = 0; j < layer->bottom_size(); ++j) {
      auto it = bottom_source.find({i, j});
      if (it == bottom_source.end() || !needs_split(it->second)) continue;
      const BlobSource source = it->second;
      const std::string& producer = in.layer(source.first).name();
      layer->set_bottom(
          j, SplitBlobName(producer, layer->bottom(j), source.second, readers_seen[source]++));
    }
    for (int j = 0; j < layer->top_size(); ++j) {
      const BlobSource source{i, j};
      if (!needs_split(source)) continue;
      const bool with_loss = has_loss(source);
      LayerParameter* split = out->add_layer();
      const std::string& blob = layer->top(j);
      split->set_name(SplitLayerName(layer->name(), blob, j));
      split->set_type("Split");
      split->add_bottom(blob);
      // A loss-carrying top keeps its loss on the first split output.
      const int outputs = with_loss ? readers(source) + 1 : readers(source);
      for (int k = 0; k < outputs; ++k) {
        split->add_top(SplitBlobName(layer->name(), blob, j, k));
        if (with_loss) split->add_loss_weight(k == 0 ? loss_weight[source] : 0.0f);
      }
      if (with_loss) {
        layer->mutable_loss_weight()->Set(j, 0.0f);
        readers_seen[source] = 1;  // readers take outputs 1..n
      }
    }
  }
}

}  // namespace demi
