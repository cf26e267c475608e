// Which blobs of a net hold a channel-blocked layout (Blob::channel_block():
// oneDNN's nChw16c on a CPU, channels last on a GPU and where oneDNN's 16-bit
// convolutions read it, with Intel AMX) and which are stored in BFLOAT16 or
// FLOAT16 (Blob::storage_type()).
#include <algorithm>
#include <mutex>
#include <set>

#include "demi/net.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

std::vector<bool> Net::BlobsTakingFormat(
    const std::function<bool(const Blob&)>& fits,
    const std::function<BlobFormats(const Layer&)>& formats,
    const std::function<bool(const Blob&)>& indifferent) const {
  // A blob can take the format when it fits and the user never sees it:
  // not an input, an output or a kept blob. An output may be read by a
  // layer too (one writing it in place: conv -> ReLU at a net's end).
  std::vector<bool> consumed(blobs_.size(), false);
  for (const std::vector<int>& ids : bottom_id_vecs_) {
    for (int id : ids) consumed[id] = true;
  }
  for (int id : net_output_blob_indices_) consumed[id] = false;
  std::vector<bool> taking(blobs_.size()), free(blobs_.size(), false);
  for (size_t b = 0; b < blobs_.size(); ++b) {
    const Blob& blob = *blobs_[b];
    free[b] = indifferent && indifferent(blob);
    const bool is_input = std::find(net_input_blobs_.begin(), net_input_blobs_.end(), &blob) !=
                          net_input_blobs_.end();
    taking[b] = !free[b] && consumed[b] && !is_input && keep_blobs_.count(blob_names_[b]) == 0 &&
                blob.count() > 0 && fits(blob);
  }
  // Then every layer touching it must read and write the format: a kNone
  // layer keeps its blobs in Caffe's, and a kUniform layer's blobs all take
  // it or none does. Refusing only spreads, so this ends.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < layers_.size(); ++i) {
      // An absorbed layer reads and writes nothing: its absorber decides.
      if (layers_[i]->absorbed()) continue;
      const BlobFormats kind = formats(*layers_[i]);
      if (kind == BlobFormats::kPerBlob) continue;
      std::vector<int> ids = bottom_id_vecs_[i];
      ids.insert(ids.end(), top_id_vecs_[i].begin(), top_id_vecs_[i].end());
      const bool all =
          std::all_of(ids.begin(), ids.end(), [&](int id) { return taking[id] || free[id]; });
      if (kind == BlobFormats::kUniform && all) continue;
      for (int id : ids) {
        changed = changed || taking[id];
        taking[id] = false;
      }
    }
  }
  return taking;
}

bool Net::WantsChannelsLast() const {
  return channels_last_ && std::any_of(layers_.begin(), layers_.end(), [](const auto& layer) {
           return layer->channels_last_layouts() == BlobFormats::kPerBlob;
         });
}

std::vector<int> Net::ChooseChannelBlocks() const {
  if (WantsChannelsLast()) return ChooseChannelsLast();
  std::vector<int> blocks(blobs_.size(), 1);
  const bool any_primitive = std::any_of(layers_.begin(), layers_.end(), [](const auto& layer) {
    return layer->blocked_layouts() == BlobFormats::kPerBlob;
  });
  if (!any_primitive) return blocks;
  const int block = DnnlChannelBlock();
  if (block == 1) return blocks;
  const std::vector<bool> blocked = BlobsTakingFormat(
      [block](const Blob& blob) { return blob.num_axes() == 4 && blob.shape(1) % block == 0; },
      [](const Layer& layer) { return layer.blocked_layouts(); });
  for (size_t b = 0; b < blobs_.size(); ++b) blocks[b] = blocked[b] ? block : 1;
  return blocks;
}

std::vector<int> Net::ChooseChannelsLast() const {
  // A 4-D blob of one channel or one pixel holds the same bytes channels
  // last: it keeps Caffe's layout and stops no layer (pool5 before fc1000,
  // which reads Caffe's layout only), the layers around it reading it as
  // their own layout.
  const std::vector<bool> last = BlobsTakingFormat(
      [](const Blob& blob) { return blob.num_axes() == 4; },
      [](const Layer& layer) { return layer.channels_last_layouts(); }, SameBytesChannelsLast);
  std::vector<int> blocks(blobs_.size(), 1);
  for (size_t b = 0; b < blobs_.size(); ++b) {
    if (last[b]) blocks[b] = static_cast<int>(blobs_[b]->shape(1));
  }
  return blocks;
}

std::vector<Type> Net::ChooseStorageTypes() const {
  std::vector<Type> types(blobs_.size(), FLOAT);
  // A layer stores one 16-bit type: a blob takes it where every layer
  // touching it stores that type.
  for (Type narrow_type : {BFLOAT16, FLOAT16}) {
    const auto formats = [narrow_type](const Layer& layer) {
      return layer.engine().types.forward_storage == narrow_type ? layer.narrow_blobs()
                                                                 : BlobFormats::kNone;
    };
    const bool any = std::any_of(layers_.begin(), layers_.end(), [&](const auto& layer) {
      return formats(*layer) != BlobFormats::kNone;
    });
    if (!any) continue;
    const std::vector<bool> narrow = BlobsTakingFormat([](const Blob&) { return true; }, formats);
    for (size_t b = 0; b < blobs_.size(); ++b) {
      if (narrow[b]) types[b] = narrow_type;
    }
  }
  return types;
}

bool Net::ApplyFormats(const std::vector<int>& blocks, const std::vector<Type>& types) {
  bool changed = false;
  for (size_t b = 0; b < blobs_.size(); ++b) {
    Blob& blob = *blobs_[b];
    changed = changed || blob.channel_block() != blocks[b] || blob.storage_type() != types[b];
    blob.set_channel_block(blocks[b]);
    blob.set_storage_type(types[b]);
  }
  return changed;
}

void Net::LogNarrowTypes(const NetParameter& param) const {
  constexpr int kNamed = 8;
  std::string wider;
  int num_wider = 0;
  // The 16-bit types stored here that this CPU computes in FLOAT (DnnlWidens).
  std::set<Type> stored_only;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const LayerTypes asked = AskedTypes(param.layer(static_cast<int>(i)), engine_defaults_);
    const LayerTypes& runs = layers_[i]->engine().types;
    for (Type type : {runs.forward_storage, runs.backward_storage}) {
      if (type != FLOAT && DnnlWidens(type)) stored_only.insert(type);
    }
    if (asked == runs) continue;
    if (num_wider++ < kNamed) {
      wider += StrCat(wider.empty() ? "" : ", ", layer_names_[i], " (", runs.ToString(), ")");
    }
  }
  if (num_wider > 0) {
    LOG(INFO) << "Net '" << name_ << "': " << num_wider << " of " << layers_.size()
              << " layers run wider types than the net asks, their engines running no narrower: "
              << wider << (num_wider > kNamed ? ", ..." : "")
              << " (each layer's decision: -v=1, or the memory tool's types column)";
  }
  const int64_t narrow = std::count_if(
      blobs_.begin(), blobs_.end(), [](const auto& blob) { return blob->storage_type() != FLOAT; });
  const bool channels_last = WantsChannelsLast();
  const int64_t last = std::count_if(blobs_.begin(), blobs_.end(), [&](const auto& blob) {
    return channels_last && blob->channels_last();
  });
  if (narrow > 0) {
    LOG(INFO) << "Net '" << name_ << "': " << narrow << " of " << blobs_.size()
              << " blobs are stored in 16 bits"
              << (last > 0 ? StrCat(", ", last, " channels last (NHWC)") : std::string());
  }
  if (context_.device != Device::kCPU) return;
  for (Type type : stored_only) {
    static std::once_flag said_float16, said_bfloat16;
    std::call_once(type == FLOAT16 ? said_float16 : said_bfloat16, [type] {
      LOG(INFO) << Type_Name(type) << " on this CPU is a storage type: its blobs hold 16 bits, "
                << "and every layer computes in FLOAT (oneDNN has no " << Type_Name(type)
                << " kernels for this CPU"
                << (type == BFLOAT16 ? ": they need AVX-512). Correct, and half the "
                                       "activation memory; not faster"
                                     : "). Correct, not fast; BFLOAT16 is the fast 16-bit type "
                                       "on CPUs with AVX-512");
    });
  }
}

void Net::SetLayersSettling(bool settling) {
  for (const std::shared_ptr<Layer>& layer : layers_) layer->set_settling(settling);
}

void Net::SettleLayouts() {
  // On a GPU the reshapes until the formats settle are trials
  // (Layer::settling: cuDNN chooses its algorithms by heuristics), and one
  // more reshape measures them. A measured engine may find no kernel where
  // its trial found one, so the formats settle again after it (normally at
  // once).
  const bool gpu = context_.device == Device::kGPU;
  SetLayersSettling(gpu);
  SettleFormats();
  if (!gpu) return;
  SetLayersSettling(false);
  ReshapeLayers();
  SettleFormats();
}

void Net::SettleFormats() {
  // What a layer can read may depend on its blobs' formats (a primitive
  // oneDNN has for one layout or type only): reshape until the choice holds.
  // Where they do not settle (a layer whose engine, given the layout it
  // asked for, finds no kernel at that shape), the blobs keep Caffe's
  // layout, then FLOAT too. Rounds: the types, the layout, a check; and as
  // many again where a layer refuses the layout it asked for (it then
  // remembers that, as a convolution does).
  constexpr int kRounds = 5;
  const std::vector<int> caffe_layout(blobs_.size(), 1);
  for (bool blocked : {true, false}) {
    for (int round = 0; round < kRounds; ++round) {
      if (!ApplyFormats(blocked ? ChooseChannelBlocks() : caffe_layout, ChooseStorageTypes())) {
        return;
      }
      ReshapeLayers();
    }
    LOG(WARNING) << "Net '" << name_ << "': the layers' "
                 << (blocked ? "blocked layouts and 16-bit blobs" : "16-bit blobs")
                 << " did not settle after " << kRounds << " reshapes; every blob keeps Caffe's "
                 << (blocked ? "layout" : "FLOAT layout");
  }
  if (ApplyFormats(std::vector<int>(blobs_.size(), 1), std::vector<Type>(blobs_.size(), FLOAT))) {
    ReshapeLayers();
  }
}

}  // namespace demi
