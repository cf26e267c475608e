#include "demi/memory/liveness.hpp"

#include <algorithm>
#include <map>

#include "demi/net.hpp"
#include "demi/util/checked_math.hpp"

namespace demi {

namespace {

struct MemoryUses {
  std::string name;
  int first_step = -1;
  int last_step = -1;
  bool first_use_writes = false;
  bool persistent = false;
};

class UseRecorder {
 public:
  void Use(SyncedMemory* memory, const std::string& name, int step, bool writes) {
    auto [it, inserted] = uses_.try_emplace(memory);
    MemoryUses& uses = it->second;
    if (inserted) {
      order_.push_back(memory);
      uses.name = name;
    }
    if (uses.first_step < 0 || step < uses.first_step) {
      uses.first_step = step;
      uses.first_use_writes = writes;
    } else if (step == uses.first_step) {
      uses.first_use_writes = uses.first_use_writes || writes;
    }
    uses.last_step = std::max(uses.last_step, step);
  }
  void MarkPersistent(SyncedMemory* memory, const std::string& name) {
    auto [it, inserted] = uses_.try_emplace(memory);
    if (inserted) {
      order_.push_back(memory);
      it->second.name = name;
    }
    it->second.persistent = true;
  }
  const std::vector<SyncedMemory*>& order() const { return order_; }
  const MemoryUses& uses(SyncedMemory* memory) const { return uses_.at(memory); }

 private:
  std::map<SyncedMemory*, MemoryUses> uses_;
  std::vector<SyncedMemory*> order_;  // first-seen order, for stable plans
};

}  // namespace

NetLiveness AnalyzeLiveness(const Net& net, bool backward, const std::set<std::string>& keep) {
  const auto& layers = net.layers();
  const int num_layers = static_cast<int>(layers.size());
  NetLiveness result;
  result.num_steps = backward ? 2 * num_layers : num_layers;
  auto backward_step = [&](int layer) { return 2 * num_layers - 1 - layer; };
  UseRecorder recorder;

  // Persistent: params (data and diff), net inputs, outputs and kept blobs.
  // Named as in messages: "<layer> param <j>", "input <blob>", "output <blob>".
  for (size_t i = 0; i < net.params().size(); ++i) {
    const auto& [layer, index] = net.param_layer_indices()[i];
    const std::string name = StrCat(net.layer_names()[layer], " param ", index);
    recorder.MarkPersistent(net.params()[i]->data().get(), name);
    recorder.MarkPersistent(net.params()[i]->diff().get(), name + " diff");
  }
  auto blob_name = [&](const Blob* blob) {
    for (size_t i = 0; i < net.blobs().size(); ++i) {
      if (net.blobs()[i].get() == blob) return net.blob_names()[i];
    }
    return std::string("?");
  };
  for (const Blob* blob : net.input_blobs()) {
    const std::string name = "input " + blob_name(blob);
    recorder.MarkPersistent(blob->data().get(), name);
    recorder.MarkPersistent(blob->diff().get(), name + " diff");
  }
  for (const Blob* blob : net.output_blobs()) {
    const std::string name = "output " + blob_name(blob);
    recorder.MarkPersistent(blob->data().get(), name);
    recorder.MarkPersistent(blob->diff().get(), name + " diff");
  }
  for (const std::string& name : keep) {
    DEMI_CHECK(net.has_blob(name), "keep_blob names '", name, "', which net '", net.name(),
               "' does not have");
    const auto blob = net.blob_by_name(name);
    recorder.MarkPersistent(blob->data().get(), name);
    recorder.MarkPersistent(blob->diff().get(), name + " diff");
  }

  for (int i = 0; i < num_layers; ++i) {
    const Layer& layer = *layers[i];
    const auto& bottoms = net.bottom_vecs()[i];
    const auto& tops = net.top_vecs()[i];
    for (size_t b = 0; b < bottoms.size(); ++b) {
      recorder.Use(bottoms[b]->data().get(), net.blob_names()[net.bottom_id_vecs()[i][b]], i,
                   false);
    }
    for (size_t t = 0; t < tops.size(); ++t) {
      recorder.Use(tops[t]->data().get(), net.blob_names()[net.top_id_vecs()[i][t]], i, true);
    }
    const bool runs_backward = backward && net.layer_need_backward()[i];
    if (!runs_backward) continue;  // its saved buffers are not written (Layer::runs_backward)
    for (const LayerBuffer& buffer : layer.buffers()) {
      if (buffer.lifetime != BufferLifetime::kSavedForBackward) continue;
      const std::string name = net.layer_names()[i] + "/" + buffer.name;
      recorder.Use(buffer.blob->data().get(), name, i, true);
      recorder.Use(buffer.blob->data().get(), name, backward_step(i), false);
    }
    const int step = backward_step(i);
    for (size_t t = 0; t < tops.size(); ++t) {
      const std::string& name = net.blob_names()[net.top_id_vecs()[i][t]];
      recorder.Use(tops[t]->diff().get(), name + " diff", step, false);
      if (layer.BackwardReadsTopData(static_cast<int>(t))) {
        recorder.Use(tops[t]->data().get(), name, step, false);
      }
    }
    for (size_t b = 0; b < bottoms.size(); ++b) {
      const std::string& name = net.blob_names()[net.bottom_id_vecs()[i][b]];
      if (net.bottom_need_backward()[i][b]) {
        recorder.Use(bottoms[b]->diff().get(), name + " diff", step, true);
      }
      if (layer.BackwardReadsBottomData(static_cast<int>(b))) {
        recorder.Use(bottoms[b]->data().get(), name, step, false);
      }
    }
  }

  for (SyncedMemory* memory : recorder.order()) {
    const MemoryUses& uses = recorder.uses(memory);
    // A memory read before anything writes it must keep its zero-filled
    // contents (e.g. the gradient of a Split output nobody backpropagates
    // into): it stays out of the arena.
    if (uses.persistent || !uses.first_use_writes) {
      result.persistent_bytes = CheckedAdd(result.persistent_bytes, memory->size(), [&] {
        return StrCat("net '", net.name(), "': the persistent bytes with '", uses.name, "'");
      });
      result.persistent_memories.push_back(memory);
      continue;
    }
    result.problem.tensors.push_back({uses.name, memory->size(), uses.first_step, uses.last_step});
    result.memories.push_back(memory);
  }
  for (const auto& layer : layers) {
    size_t layer_bytes = 0;
    for (const LayerBuffer& buffer : layer->buffers()) {
      if (buffer.lifetime != BufferLifetime::kScratch) continue;
      result.scratch_memories.push_back(buffer.blob->data().get());
      result.scratch_offsets.push_back(layer_bytes);
      layer_bytes = CheckedAdd(layer_bytes, AlignedBytes(buffer.blob->data()->size()), [&] {
        return StrCat("the scratch bytes of layer '", layer->layer_param().name(),
                      "' with buffer '", buffer.name, "'");
      });
    }
    result.scratch_bytes = std::max(result.scratch_bytes, layer_bytes);
  }
  if (!result.scratch_memories.empty()) {
    result.problem.tensors.push_back(
        {"scratch", result.scratch_bytes, 0, std::max(result.num_steps - 1, 0)});
  }
  return result;
}

}  // namespace demi
