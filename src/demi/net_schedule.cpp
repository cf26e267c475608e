#include "demi/net_schedule.hpp"

#include <algorithm>
#include <map>

#include "demi/net.hpp"
#include "demi/util/checked_math.hpp"

namespace demi {

namespace {

/// "64x3x224x224".
std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "x" : "") + std::to_string(shape[i]);
  return shape.empty() ? "scalar" : text;
}

/// Gives each SyncedMemory an index into the schedule's memories, in the
/// order first mentioned (so plans are stable).
class MemoryIndex {
 public:
  explicit MemoryIndex(NetSchedule* out) : out_(out) {}
  int Of(SyncedMemory* memory, const std::string& name) {
    auto [it, inserted] = index_.try_emplace(memory, static_cast<int>(out_->memories.size()));
    if (inserted) {
      out_->memories.push_back(memory);
      out_->schedule.memories.push_back({name, memory->size(), false, false});
    }
    return it->second;
  }
  void MarkPersistent(SyncedMemory* memory, const std::string& name) {
    out_->schedule.memories[Of(memory, name)].persistent = true;
  }

 private:
  NetSchedule* out_;
  std::map<SyncedMemory*, int> index_;
};

/// Forward FLOPs, estimated: 2 multiply-adds per weight per output position
/// for layers with weights (convolution, inner product), else one per
/// output element.
double EstimateForwardFlops(const Layer& layer, const std::vector<Blob*>& bottoms,
                            const std::vector<Blob*>& tops) {
  double outputs = 0;
  for (const Blob* top : tops) outputs += static_cast<double>(top->count());
  const std::string type = layer.type();
  if (layer.blobs().empty() || layer.blobs()[0]->num_axes() < 2) return outputs;
  const Blob& weights = *layer.blobs()[0];
  if (type == "Convolution" || type == "InnerProduct") {
    return 2.0 * outputs * static_cast<double>(weights.count() / weights.shape(0));
  }
  if (type == "Deconvolution" && !bottoms.empty()) {
    return 2.0 * static_cast<double>(bottoms[0]->count()) *
           static_cast<double>(weights.count() / weights.shape(0));
  }
  return outputs;
}

/// The order groups of layer `i` (ScheduledLayer::order_groups): 0 for
/// layers that draw random numbers or read data, 1 for layers with a loss
/// (the net sums their losses in order), 2 + p for those using shared
/// param p (backward sums their gradients into one diff).
std::vector<int> OrderGroups(const Net& net, size_t i) {
  std::vector<int> groups;
  const Layer& layer = *net.layers()[i];
  if (layer.ForwardDraws()) groups.push_back(0);
  for (size_t t = 0; t < net.top_vecs()[i].size(); ++t) {
    if (layer.loss(static_cast<int>(t)) != 0.0f) {
      groups.push_back(1);
      break;
    }
  }
  for (size_t p = 0; p < net.params().size(); ++p) {
    if (net.param_layer_indices()[p].first != static_cast<int>(i)) continue;
    const int owner = net.param_owners()[p] < 0 ? static_cast<int>(p) : net.param_owners()[p];
    const bool shared = net.param_owners()[p] >= 0 ||
                        std::count(net.param_owners().begin(), net.param_owners().end(), owner) > 0;
    if (shared) groups.push_back(2 + owner);
  }
  return groups;
}

/// Params (data and diff), net inputs, outputs and kept blobs stay out of
/// the plan. Named as in messages: "<layer> param <j>", "input <blob>",
/// "output <blob>".
void MarkPersistentMemories(const Net& net, const std::set<std::string>& keep, MemoryIndex* index) {
  auto mark_blob = [&](const Blob& blob, const std::string& name) {
    index->MarkPersistent(blob.data().get(), name);
    index->MarkPersistent(blob.diff().get(), name + " diff");
  };
  for (size_t i = 0; i < net.params().size(); ++i) {
    const auto& [layer, param] = net.param_layer_indices()[i];
    mark_blob(*net.params()[i], StrCat(net.layer_names()[layer], " param ", param));
  }
  auto blob_name = [&](const Blob* blob) {
    for (size_t i = 0; i < net.blobs().size(); ++i) {
      if (net.blobs()[i].get() == blob) return net.blob_names()[i];
    }
    return std::string("?");
  };
  for (const Blob* blob : net.input_blobs()) mark_blob(*blob, "input " + blob_name(blob));
  for (const Blob* blob : net.output_blobs()) mark_blob(*blob, "output " + blob_name(blob));
  for (const std::string& name : keep) {
    DEMI_CHECK(net.has_blob(name), "keep_blob names '", name, "', which net '", net.name(),
               "' does not have");
    mark_blob(*net.blob_by_name(name), name);
  }
}

/// Layer `i`'s step: what its forward reads and writes, and (when it runs
/// backward) the buffers it saves and what its backward reads and writes.
ScheduledLayer DescribeLayer(const Net& net, size_t i, bool backward, MemoryIndex* index,
                             Schedule* schedule) {
  const Layer& layer = *net.layers()[i];
  const auto& bottoms = net.bottom_vecs()[i];
  const auto& tops = net.top_vecs()[i];
  auto bottom_name = [&](size_t b) { return net.blob_names()[net.bottom_id_vecs()[i][b]]; };
  auto top_name = [&](size_t t) { return net.blob_names()[net.top_id_vecs()[i][t]]; };
  ScheduledLayer scheduled;
  scheduled.name = net.layer_names()[i];
  scheduled.replayable = layer.CanReplay();
  scheduled.replay_reads_saved = layer.ReplayReadsSavedBuffers();
  scheduled.forward_flops = EstimateForwardFlops(layer, bottoms, tops);
  scheduled.order_groups = OrderGroups(net, i);
  for (size_t b = 0; b < bottoms.size(); ++b) {
    scheduled.forward_reads.push_back(index->Of(bottoms[b]->data().get(), bottom_name(b)));
  }
  for (size_t t = 0; t < tops.size(); ++t) {
    scheduled.forward_writes.push_back(index->Of(tops[t]->data().get(), top_name(t)));
  }
  // A layer that does not run backward writes no saved buffers
  // (Layer::runs_backward); an absorbed layer's Backward does nothing
  // (its absorber's reads what both need).
  scheduled.runs_backward = backward && net.layer_need_backward()[i] && !layer.absorbed();
  if (!scheduled.runs_backward) return scheduled;
  for (const LayerBuffer& buffer : layer.buffers()) {
    if (buffer.lifetime != BufferLifetime::kSavedForBackward) continue;
    const int memory = index->Of(buffer.blob->data().get(), scheduled.name + "/" + buffer.name);
    schedule->memories[memory].saved_buffer = true;
    scheduled.saved.push_back(memory);
  }
  for (size_t t = 0; t < tops.size(); ++t) {
    scheduled.backward_reads.push_back(index->Of(tops[t]->diff().get(), top_name(t) + " diff"));
    if (layer.BackwardReadsTopData(static_cast<int>(t))) {
      scheduled.backward_reads.push_back(index->Of(tops[t]->data().get(), top_name(t)));
    }
  }
  for (size_t b = 0; b < bottoms.size(); ++b) {
    if (net.bottom_need_backward()[i][b]) {
      scheduled.backward_writes.push_back(
          index->Of(bottoms[b]->diff().get(), bottom_name(b) + " diff"));
    }
    if (layer.BackwardReadsBottomData(static_cast<int>(b))) {
      scheduled.backward_reads.push_back(index->Of(bottoms[b]->data().get(), bottom_name(b)));
    }
  }
  return scheduled;
}

/// Scratch buffers: one region as large as the largest layer's buffers side
/// by side (only one layer runs at a time).
void DescribeScratch(const Net& net, NetSchedule* result) {
  for (const auto& layer : net.layers()) {
    size_t layer_bytes = 0;
    for (const LayerBuffer& buffer : layer->buffers()) {
      if (buffer.lifetime != BufferLifetime::kScratch) continue;
      result->scratch_memories.push_back(buffer.blob->data().get());
      result->scratch_offsets.push_back(layer_bytes);
      layer_bytes = CheckedAdd(layer_bytes, AlignedBytes(buffer.blob->data()->size()), [&] {
        return StrCat("the scratch bytes of layer '", layer->layer_param().name(),
                      "' with buffer '", buffer.name, "'");
      });
    }
    result->schedule.scratch_bytes = std::max(result->schedule.scratch_bytes, layer_bytes);
  }
  result->schedule.has_scratch = !result->scratch_memories.empty();
}

}  // namespace

NetSchedule DescribeSchedule(const Net& net, bool backward, const std::set<std::string>& keep) {
  NetSchedule result;
  result.net_name = net.name();
  result.schedule.backward = backward;
  MemoryIndex index(&result);
  MarkPersistentMemories(net, keep, &index);
  for (size_t i = 0; i < net.layers().size(); ++i) {
    result.schedule.layers.push_back(DescribeLayer(net, i, backward, &index, &result.schedule));
  }
  DescribeScratch(net, &result);
  return result;
}

NetLiveness AnalyzeLiveness(const Net& net, bool backward, const std::set<std::string>& keep) {
  return AnalyzeLiveness(DescribeSchedule(net, backward, keep));
}

NetMemoryReport ReportNetMemory(const Net& net, int64_t batch, size_t budget) {
  NetMemoryReport report = ReportMemory(DescribeSchedule(net, net.phase() == TRAIN, {}),
                                        net.schedule_order() == SEARCH, batch, budget);
  for (const auto& layer : net.layers()) {
    // An absorbed layer runs in its absorber's passes (net_fusion.cpp).
    report.engines.push_back({layer->layer_param().name(), layer->type(),
                              layer->absorbed() ? StrCat("in ", layer->absorbed_by())
                                                : std::string(EngineName(layer->running_engine())),
                              layer->engine().types.ToString()});
  }
  // The timelines' hover titles name each tensor's shape.
  std::map<const SyncedMemory*, std::string> shapes;
  for (const auto& blob : net.blobs()) {
    shapes.emplace(blob->data().get(), ShapeText(blob->shape()));
    shapes.emplace(blob->diff().get(), ShapeText(blob->shape()));
  }
  for (const auto& layer : net.layers()) {
    for (const LayerBuffer& buffer : layer->buffers()) {
      shapes.emplace(buffer.blob->data().get(), ShapeText(buffer.blob->shape()));
    }
  }
  for (MemoryTimeline* timeline : {&report.timeline, &report.recompute_timeline}) {
    for (TimelineTensor& tensor : timeline->tensors) {
      const auto it = shapes.find(tensor.memory);
      if (it != shapes.end()) tensor.shape = it->second;
    }
  }
  return report;
}

}  // namespace demi
