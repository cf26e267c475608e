#include "demi/net.hpp"

#include <algorithm>

#include "demi/layer_registry.hpp"
#include "demi/memory/liveness.hpp"
#include "demi/util/checked_math.hpp"
#include "demi/util/device.hpp"
#include "demi/util/gpu_math.hpp"
#include "demi/util/insert_splits.hpp"
#include "demi/util/io.hpp"
#include "demi/util/upgrade_proto.hpp"

namespace demi {

namespace {

/// A distinct, reproducible seed for each layer's random stream.
uint32_t LayerSeed(uint32_t net_seed, int layer_id, int replica) {
  // Replica 0 keeps the single-replica stream; the others get their own, so
  // that, say, Dropout masks differ between replicas.
  std::vector<uint32_t> parts{net_seed, static_cast<uint32_t>(layer_id), 0x64656d69u};
  if (replica > 0) parts.push_back(static_cast<uint32_t>(replica));
  std::seed_seq seq(parts.begin(), parts.end());
  uint32_t seed = 0;
  seq.generate(&seed, &seed + 1);
  return seed;
}

/// Why a net has no layers: its prototxt has none, or its include/exclude
/// rules leave none for the state it is built for.
std::string NoLayersMessage(const NetParameter& param, const std::string& source) {
  const std::string net = source.empty() ? StrCat("net '", param.name(), "'")
                                         : StrCat(source, " (net '", param.name(), "')");
  if (param.layer_size() == 0) return StrCat(net, " has no layers");
  const NetState& state = param.state();
  std::string stages;
  for (const std::string& stage : state.stage()) stages += (stages.empty() ? "" : ", ") + stage;
  return StrCat(net, " has no layers for phase ", state.phase() == TRAIN ? "TRAIN" : "TEST",
                ", level ", state.level(), ", stages [", stages, "]: the include/exclude rules of ",
                "all ", param.layer_size(), " of its layers leave them out");
}

}  // namespace

Net::Net(const NetParameter& param, const Context& context, std::shared_ptr<Arena> arena,
         const std::string& source)
    : source_(source), context_(context), arena_(std::move(arena)) {
  Init(param);
}

Net::Net(const std::string& path, Phase phase, int level, const std::vector<std::string>& stages,
         const Context& context)
    : source_(path), context_(context) {
  NetParameter param;
  ReadNetParamsFromTextFile(path, &param);
  param.mutable_state()->set_phase(phase);
  param.mutable_state()->set_level(level);
  for (const std::string& stage : stages) param.mutable_state()->add_stage(stage);
  Init(param);
}

void Net::Init(const NetParameter& in_param) {
  NetParameter upgraded(in_param);
  UpgradeNetAsNeeded(StrCat("net '", in_param.name(), "'"), &upgraded);
  phase_ = upgraded.state().phase();
  context_.cudnn_workspace_bytes = static_cast<size_t>(upgraded.cudnn_workspace_mb()) << 20;
  engine_defaults_ = NetEngineDefaults(upgraded);
  context_.engine = engine_defaults_.engine;
  if (context_.device == Device::kGPU) {
    LOG(INFO) << "Net '" << upgraded.name() << "' GPU math: " << Describe(context_.gpu_math);
  } else if (engine_defaults_.engine == EngineKind::kCudnn) {
    // As Caffe in CPU mode; but DEFAULT would have given oneDNN's kernels.
    LOG(WARNING) << "Net '" << upgraded.name() << "' asks for engine CUDNN, which runs on GPUs "
                 << "only: on the CPU its layers without an engine of their own run CAFFE "
                 << "(DEFAULT picks DNNL's faster kernels here)";
  }
  NetParameter filtered;
  FilterNet(upgraded, &filtered);
  // An empty net would run, report a loss of 0 and write empty snapshots.
  DEMI_CHECK(filtered.layer_size() > 0, NoLayersMessage(upgraded, source_));
  NetParameter param;
  InsertSplits(filtered, &param);
  name_ = param.name();
  debug_info_ = param.debug_info();
  LOG(INFO) << "Initializing net '" << name_ << "' for phase "
            << (phase_ == TRAIN ? "TRAIN" : "TEST");
  for (const LayerParameter& layer : param.layer()) inserted_split_.insert(layer.name());
  for (const LayerParameter& layer : filtered.layer()) inserted_split_.erase(layer.name());
  CreateAndConnectLayers(param);
  AnalyzeBackward(param);
  NoteOverwrittenTops();
  FuseLayers(param.fuse_layers());
  AppendParams();
  CollectOutputs();
  LinkSavedBuffers();
  strategy_ = param.memory_optimization();
  for (const std::string& name : param.keep_blob()) {
    if (name == "*") {
      keep_blobs_.insert(blob_names_.begin(), blob_names_.end());
    } else {
      keep_blobs_.insert(name);
    }
  }
  memory_budget_ = param.memory_budget();
  schedule_order_ = param.schedule();
  const auto reshapes_in_forward =
      std::find_if(layers_.begin(), layers_.end(),
                   [](const auto& layer) { return layer->ForwardReshapesTops(); });
  if (schedule_order_ == SEARCH && reshapes_in_forward != layers_.end()) {
    // Its blobs' sizes change from pass to pass, and a re-plan must not move
    // a layer: replicas' gradient hand-overs follow the backward order.
    schedule_order_ = PROTOTXT;
    LOG(INFO) << "Net '" << name_ << "' runs in prototxt order: layer '"
              << layer_names_[reshapes_in_forward - layers_.begin()]
              << "' shapes its tops in Forward";
  }
  channels_last_ = param.channels_last();
  DEMI_CHECK(memory_budget_ == 0 || strategy_ == ARENA, "net '", name_,
             "': memory_budget needs memory_optimization ARENA, not ",
             MemoryOptimization_Name(strategy_));
  if (!arena_) arena_ = std::make_shared<Arena>();
  SettleLayouts();
  LogNarrowTypes(param);
  PlanMemory();
  LOG(INFO) << "Network initialization done.";
}

void Net::CreateAndConnectLayers(const NetParameter& param) {
  const int num_layers = param.layer_size();
  bottom_vecs_.resize(num_layers);
  bottom_id_vecs_.resize(num_layers);
  bottom_need_backward_.resize(num_layers);
  top_vecs_.resize(num_layers);
  top_id_vecs_.resize(num_layers);
  for (int layer_id = 0; layer_id < num_layers; ++layer_id) {
    LayerParameter layer_param = param.layer(layer_id);
    if (!layer_param.has_phase()) layer_param.set_phase(phase_);
    DEMI_CHECK(layer_param.propagate_down_size() == 0 ||
                   layer_param.propagate_down_size() == layer_param.bottom_size(),
               "layer '", layer_param.name(), "' has ", layer_param.propagate_down_size(),
               " propagate_down values for ", layer_param.bottom_size(), " bottoms");
    const auto named = layer_index_.find(layer_param.name());
    const int same_name = named == layer_index_.end() ? -1 : named->second;
    std::shared_ptr<Layer> layer = LayerRegistry::Create(layer_param);
    // Their first reshape (SetUp) is the first trial of SettleLayouts.
    layer->set_context(context_);
    layer->set_settling(context_.device == Device::kGPU);
    layer->set_engine(DecideLayerEngine(layer_param));
    layer->SeedRng(LayerSeed(context_.seed, layer_id, context_.replica));
    layers_.push_back(layer);
    layer_names_.push_back(layer_param.name());
    layer_index_.emplace(layer_param.name(), layer_id);  // the first of a name
    for (int i = 0; i < layer_param.bottom_size(); ++i) AppendBottom(param, layer_id, i);
    for (int i = 0; i < layer_param.top_size(); ++i) AppendTop(param, layer_id, i);
    if (layer->AutoTopBlobs()) {
      const int needed = std::max(layer->MinTopBlobs(), layer->ExactNumTopBlobs());
      for (int i = layer_param.top_size(); i < needed; ++i) AppendTop(param, layer_id, i);
    }
    SetUpLayer(layer_id);
    if (same_name >= 0) CheckSharedName(same_name, layer_id);
  }
}

void Net::CheckSharedName(int earlier, int later) const {
  // Caffe allows two layers one name (BVLC's mnist_autoencoder has two
  // losses named "loss"), which is harmless where neither keeps anything by
  // it: weights, snapshots and data read positions go by layer name.
  DataReadPosition position;
  for (int id : {earlier, later}) {
    const Layer& layer = *layers_[id];
    const bool params = !layer.blobs().empty();
    DEMI_CHECK(!params && !layer.SaveReadPosition(&position), "net '", name_, "': layers ", earlier,
               " (", layers_[earlier]->type(), ") and ", later, " (", layers_[later]->type(),
               ") are both named '", layer_names_[id], "', and layer ", id, " keeps ",
               params ? "params" : "a data read position",
               ", which weights and snapshots find by layer name: rename one of them");
  }
  LOG(INFO) << "Layers " << earlier << " and " << later << " are both named '"
            << layer_names_[later] << "' (Caffe allows it; layer_by_name finds layer " << earlier
            << ")";
}

EngineDecision Net::DecideLayerEngine(const LayerParameter& layer_param) const {
  const EngineDecision decision = DecideEngine(layer_param, engine_defaults_, context_.device);
  if (decision.reason.empty()) {
    VLOG(1) << "Engine of " << DescribeDecision(layer_param, decision);
  } else {
    LOG(INFO) << "Engine of " << DescribeDecision(layer_param, decision);
  }
  return decision;
}

void Net::AppendBottom(const NetParameter& param, int layer_id, int bottom_id) {
  const LayerParameter& layer_param = param.layer(layer_id);
  const std::string& name = layer_param.bottom(bottom_id);
  auto it = available_blobs_.find(name);
  if (it == available_blobs_.end()) {
    ThrowError(StrCat("layer '", layer_param.name(), "' (", layer_param.type(),
                      ") reads bottom blob '", name, "' (bottom ", bottom_id, "), ",
                      blob_index_.count(name) ? "which an earlier layer already consumed"
                                              : "which no earlier layer produces"));
  }
  const int blob_id = it->second;
  bottom_vecs_[layer_id].push_back(blobs_[blob_id].get());
  bottom_id_vecs_[layer_id].push_back(blob_id);
  bottom_need_backward_[layer_id].push_back(false);  // decided by AnalyzeBackward
  available_blobs_.erase(it);
}

void Net::AppendTop(const NetParameter& param, int layer_id, int top_id) {
  const LayerParameter& layer_param = param.layer(layer_id);
  const std::string name =
      top_id < layer_param.top_size() ? layer_param.top(top_id) : StrCat("(automatic)");
  const bool in_place = top_id < layer_param.bottom_size() && top_id < layer_param.top_size() &&
                        layer_param.bottom(top_id) == name;
  int blob_id;
  if (in_place) {
    blob_id = bottom_id_vecs_[layer_id][top_id];
  } else {
    DEMI_CHECK(top_id >= layer_param.top_size() || !blob_index_.count(name), "top blob '", name,
               "' is produced by two layers: '", layer_names_[blob_producer_[blob_index_[name]]],
               "' and '", layer_param.name(), "'");
    blob_id = static_cast<int>(blobs_.size());
    blobs_.push_back(std::make_shared<Blob>());
    blob_names_.push_back(name);
    blob_need_backward_.push_back(false);
    blob_producer_.push_back(layer_id);
    blob_loss_weights_.push_back(0.0f);
    if (top_id < layer_param.top_size()) blob_index_[name] = blob_id;
    if (layer_param.type() == "Input") net_input_blobs_.push_back(blobs_[blob_id].get());
  }
  blob_producer_[blob_id] = layer_id;
  top_vecs_[layer_id].push_back(blobs_[blob_id].get());
  top_id_vecs_[layer_id].push_back(blob_id);
  if (top_id < layer_param.top_size()) available_blobs_[name] = blob_id;
}

std::string Net::DescribeBottoms(int layer_id) const {
  std::string text;
  for (size_t i = 0; i < bottom_id_vecs_[layer_id].size(); ++i) {
    const int blob_id = bottom_id_vecs_[layer_id][i];
    // An in-place layer is its blob's producer by now: its input came before.
    const int producer = blob_producer_[blob_id];
    const std::string from = producer == layer_id
                                 ? std::string(" (in place)")
                                 : StrCat(" from layer '", layer_names_[producer], "'");
    text += StrCat(i ? "; " : "", "bottom ", i, " '", blob_names_[blob_id], "'", from,
                   " has shape ", blobs_[blob_id]->shape_string());
  }
  return text;
}

void Net::SetUpLayer(int layer_id) {
  Layer& layer = *layers_[layer_id];
  LOG(INFO) << "Setting up " << layer_names_[layer_id];
  try {
    // Shapes of blobs the layer runs in place: it must keep their counts
    // (as Caffe, an N x C blob may read as N x C x 1 x 1).
    std::vector<std::pair<const Blob*, std::vector<int64_t>>> in_place;
    for (const Blob* bottom : bottom_vecs_[layer_id]) {
      const auto& tops = top_vecs_[layer_id];
      if (std::find(tops.begin(), tops.end(), bottom) != tops.end()) {
        in_place.emplace_back(bottom, bottom->shape());
      }
    }
    layer.SetUp(bottom_vecs_[layer_id], top_vecs_[layer_id]);
    for (const auto& [blob, shape] : in_place) {
      int64_t count = 0;
      DEMI_CHECK(CountOfDims(shape, &count) && blob->count() == count, layer.type(), " layer '",
                 layer_names_[layer_id], "' cannot run in place: it changes its blob's shape from ",
                 ShapeString(shape), " to ", blob->shape_string(),
                 "; give its top a name of its own");
    }
  } catch (const Error& error) {
    std::string bottoms = DescribeBottoms(layer_id);
    ThrowError(StrCat("cannot set up layer '", layer_names_[layer_id], "' (", layer.type(),
                      "): ", error.what(), bottoms.empty() ? "" : " [", bottoms,
                      bottoms.empty() ? "" : "]"));
  } catch (const std::bad_alloc&) {
    // Params are allocated and filled here, before any plan: name the layer.
    double param_mib = 0;
    for (const auto& blob : layer.blobs()) param_mib += blob->data()->size() / (1024.0 * 1024.0);
    ThrowError(StrCat("out of memory setting up layer '", layer_names_[layer_id], "' (",
                      layer.type(), "), whose params take ", param_mib,
                      " MiB; try: build/tools/memory --model=",
                      source_.empty() ? "net.prototxt" : source_, " (see --fit)"));
  }
  size_t bytes = 0;
  for (size_t i = 0; i < top_vecs_[layer_id].size(); ++i) {
    const int blob_id = top_id_vecs_[layer_id][i];
    Blob* top = top_vecs_[layer_id][i];
    LOG(INFO) << "Top shape: " << top->shape_string();
    const float weight = layer.loss(static_cast<int>(i));
    blob_loss_weights_[blob_id] = weight;
    if (weight != 0.0f) {
      LOG(INFO) << "    with loss weight " << weight;
    }
    bytes = CheckedAdd(bytes, top->data()->size(), [&] {
      return StrCat("the bytes of the tops of layer '", layer_names_[layer_id], "'");
    });
  }
  VLOG(1) << "Memory of tops of layer " << layer_names_[layer_id] << ": " << bytes;
}

void Net::AppendParams() {
  for (size_t layer_id = 0; layer_id < layers_.size(); ++layer_id) {
    for (size_t param_id = 0; param_id < layers_[layer_id]->blobs().size(); ++param_id) {
      AppendParam(layers_[layer_id]->layer_param(), static_cast<int>(layer_id),
                  static_cast<int>(param_id));
    }
  }
  param_block_.Bind(learnable_params_);
}

void Net::AppendParam(const LayerParameter& layer_param, int layer_id, int param_id) {
  const ParamSpec spec =
      param_id < layer_param.param_size() ? layer_param.param(param_id) : ParamSpec();
  const std::string& param_name = spec.name();
  const int net_param_id = static_cast<int>(params_.size());
  std::shared_ptr<Blob> blob = layers_[layer_id]->blobs()[param_id];
  params_.push_back(blob);
  param_layer_indices_.emplace_back(layer_id, param_id);
  param_display_names_.push_back(param_name.empty() ? std::to_string(param_id) : param_name);
  auto owner_it = param_names_index_.find(param_name);
  if (param_name.empty() || owner_it == param_names_index_.end()) {
    // This param owns its memory and is learned by the solver.
    param_owners_.push_back(-1);
    if (!param_name.empty()) param_names_index_[param_name] = net_param_id;
    learnable_param_ids_.push_back(static_cast<int>(learnable_params_.size()));
    learnable_params_.push_back(blob.get());
    params_lr_.push_back(spec.lr_mult());
    params_weight_decay_.push_back(spec.decay_mult());
    return;
  }
  // Shared: point at the owner after checking the shapes agree.
  const int owner_id = owner_it->second;
  param_owners_.push_back(owner_id);
  const auto& [owner_layer, owner_param] = param_layer_indices_[owner_id];
  Blob& owner = *params_[owner_id];
  if (spec.share_mode() == ParamSpec::PERMISSIVE) {
    DEMI_CHECK(owner.count() == blob->count(), "param '", param_name, "' of layer '",
               layer_param.name(), "' has count ", blob->count(), " (shape ", blob->shape_string(),
               ") but its owner in layer '", layer_names_[owner_layer], "' has count ",
               owner.count(), " (shape ", owner.shape_string(), ")");
  } else {
    DEMI_CHECK(owner.shape() == blob->shape(), "param '", param_name, "' of layer '",
               layer_param.name(), "' has shape ", blob->shape_string(),
               " but its owner in layer '", layer_names_[owner_layer], "' (param ", owner_param,
               ") has shape ", owner.shape_string(),
               "; set share_mode: PERMISSIVE to share by count");
  }
  CheckSharedMultipliers(layer_param, spec, owner_id, net_param_id);
  const int learnable_id = learnable_param_ids_[owner_id];
  learnable_param_ids_.push_back(learnable_id);
  if (spec.has_lr_mult()) params_lr_[learnable_id] = spec.lr_mult();
  if (spec.has_decay_mult()) params_weight_decay_[learnable_id] = spec.decay_mult();
  blob->ShareData(owner);
  blob->ShareDiff(owner);
}

void Net::CheckSharedMultipliers(const LayerParameter& layer_param, const ParamSpec& spec,
                                 int owner_id, int net_param_id) const {
  // Caffe's rule: the layers sharing a param that give lr_mult (decay_mult)
  // give the same; one that gives none takes the others'.
  for (int id = 0; id < net_param_id; ++id) {
    if (id != owner_id && param_owners_[id] != owner_id) continue;
    const auto& [layer_id, param_id] = param_layer_indices_[id];
    const LayerParameter& other = layers_[layer_id]->layer_param();
    if (param_id >= other.param_size()) continue;
    const ParamSpec& given = other.param(param_id);
    const auto check = [&](bool both, float theirs, float ours, const char* field) {
      DEMI_CHECK(!both || theirs == ours, "shared param '", spec.name(), "' has mismatched ", field,
                 ": layer '", other.name(), "' gives ", theirs, ", layer '", layer_param.name(),
                 "' gives ", ours);
    };
    check(given.has_lr_mult() && spec.has_lr_mult(), given.lr_mult(), spec.lr_mult(), "lr_mult");
    check(given.has_decay_mult() && spec.has_decay_mult(), given.decay_mult(), spec.decay_mult(),
          "decay_mult");
  }
}

void Net::CollectOutputs() {
  for (const auto& [name, blob_id] : available_blobs_) {
    LOG(INFO) << "This network produces output " << name;
    net_output_blobs_.push_back(blobs_[blob_id].get());
    net_output_blob_indices_.push_back(blob_id);
  }
}

void Net::NoteOverwrittenTops() {
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (top_id_vecs_[i].empty()) continue;
    const int blob = top_id_vecs_[i][0];
    // Only a layer in place writes a blob an earlier layer produced.
    bool overwritten = false;
    for (size_t j = i + 1; j < layers_.size() && !overwritten; ++j) {
      const auto& tops = top_id_vecs_[j];
      overwritten = std::find(tops.begin(), tops.end(), blob) != tops.end();
    }
    if (overwritten && layers_[i]->TopOverwrittenLater()) {
      layers_[i]->Reshape(bottom_vecs_[i], top_vecs_[i]);  // sizes its copy
    }
  }
}

void Net::LinkSavedBuffers() {
  for (size_t i = 0; i + 1 < layers_.size(); ++i) {
    Blob* saved = layers_[i]->SavedOutputCopy();
    // A layer whose Backward never runs does not fill its saved copy.
    if (saved == nullptr || !layers_[i]->runs_backward()) continue;
    const auto& tops = top_vecs_[i];
    const auto& next_bottoms = bottom_vecs_[i + 1];
    const auto& next_tops = top_vecs_[i + 1];
    // The next layer reads this layer's output in place: its bottom 0 still
    // holds exactly what `saved` copied.
    const bool in_place_chain = !tops.empty() && !next_bottoms.empty() && !next_tops.empty() &&
                                next_bottoms[0] == tops[0] && next_tops[0] == tops[0];
    if (in_place_chain && layers_[i + 1]->ShareSavedInput(saved)) {
      VLOG(1) << layer_names_[i + 1] << " reads the saved output of " << layer_names_[i];
    }
  }
}

std::shared_ptr<Blob> Net::blob_by_name(const std::string& name) const {
  auto it = blob_index_.find(name);
  if (it == blob_index_.end()) {
    std::string known;
    for (const std::string& blob : blob_names_) known += (known.empty() ? "" : ", ") + blob;
    ThrowError(StrCat("net '", name_, "' has no blob '", name, "'; blobs: ", known));
  }
  return blobs_[it->second];
}

std::shared_ptr<Layer> Net::layer_by_name(const std::string& name) const {
  return layers_[layer_index(name)];
}

int Net::layer_index(const std::string& name) const {
  auto it = layer_index_.find(name);
  DEMI_CHECK(it != layer_index_.end(), "net '", name_, "' has no layer '", name, "'");
  return it->second;
}

}  // namespace demi
