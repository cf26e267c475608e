// Which blobs of a net hold oneDNN's channel-blocked layout (Blob::channel_block()).
#include <algorithm>

#include "demi/net.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

std::vector<int> Net::ChooseChannelBlocks() const {
  std::vector<int> blocks(blobs_.size(), 1);
  const bool any_primitive = std::any_of(layers_.begin(), layers_.end(), [](const auto& layer) {
    return layer->blocked_layouts() == BlockedLayouts::kPerBlob;
  });
  if (!any_primitive) return blocks;
  const int block = DnnlChannelBlock();
  if (block == 1) return blocks;
  // A blob can be blocked when its shape allows it and the user never sees
  // it: not an input, an output (read by no layer) or a kept blob.
  std::vector<bool> consumed(blobs_.size(), false);
  for (const std::vector<int>& ids : bottom_id_vecs_) {
    for (int id : ids) consumed[id] = true;
  }
  std::vector<bool> blocked(blobs_.size());
  for (size_t b = 0; b < blobs_.size(); ++b) {
    const Blob& blob = *blobs_[b];
    const bool is_input = std::find(net_input_blobs_.begin(), net_input_blobs_.end(), &blob) !=
                          net_input_blobs_.end();
    blocked[b] = consumed[b] && !is_input && keep_blobs_.count(blob_names_[b]) == 0 &&
                 blob.num_axes() == 4 && blob.count() > 0 && blob.shape(1) % block == 0;
  }
  // Then every layer touching it must read or write the layout: a kNone
  // layer keeps its blobs in Caffe's layout, and a kUniform layer's blobs
  // are all blocked or none is. Unblocking only spreads, so this ends.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < layers_.size(); ++i) {
      const BlockedLayouts kind = layers_[i]->blocked_layouts();
      if (kind == BlockedLayouts::kPerBlob) continue;
      std::vector<int> ids = bottom_id_vecs_[i];
      ids.insert(ids.end(), top_id_vecs_[i].begin(), top_id_vecs_[i].end());
      const bool all = std::all_of(ids.begin(), ids.end(), [&](int id) { return blocked[id]; });
      if (kind == BlockedLayouts::kUniform && all) continue;
      for (int id : ids) {
        changed = changed || blocked[id];
        blocked[id] = false;
      }
    }
  }
  for (size_t b = 0; b < blobs_.size(); ++b) blocks[b] = blocked[b] ? block : 1;
  return blocks;
}

bool Net::ApplyChannelBlocks(const std::vector<int>& blocks) {
  bool changed = false;
  for (size_t b = 0; b < blobs_.size(); ++b) {
    changed = changed || blobs_[b]->channel_block() != blocks[b];
    blobs_[b]->set_channel_block(blocks[b]);
  }
  return changed;
}

void Net::SettleLayouts() {
  // What a layer can read may depend on its blobs' layouts (a primitive
  // oneDNN has for one layout only): reshape until the choice holds.
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    if (!ApplyChannelBlocks(ChooseChannelBlocks())) return;
    ReshapeLayers();
  }
  LOG(WARNING) << "Net '" << name_ << "': the layers' blocked layouts did not settle after "
               << kRounds << " reshapes; every blob keeps Caffe's layout";
  if (ApplyChannelBlocks(std::vector<int>(blobs_.size(), 1))) ReshapeLayers();
}

}  // namespace demi
