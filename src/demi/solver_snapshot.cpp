// Solver snapshots: the .caffemodel and .solverstate files, and resuming
// from them. The rest of the Solver is in solver.cpp.
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "demi/data/hdf5.hpp"
#include "demi/hdf5_snapshots.hpp"
#include "demi/solver.hpp"
#include "demi/util/io.hpp"
#include "demi/util/strings.hpp"
#include "demi/weights_file.hpp"

namespace demi {

namespace {

/// A .caffemodel read as a SolverState parses (its fields land among the
/// unknown ones, or as a garbled learned_net) but holds no iteration and no
/// history; read as a NetParameter, it holds layers.
bool IsWeightsFile(const std::string& path, const SolverState& state) {
  if (state.has_iter() || state.history_size() > 0) return false;
  NetParameter net;
  try {
    ReadProtoFromBinaryFile(path, &net);
  } catch (const Error&) {
    return false;
  }
  return net.layer_size() > 0 || net.layers_size() > 0;
}

/// A .solverstate, binary proto or (by its signature, as Caffe tells them
/// apart by name) HDF5.
SolverState ReadSolverState(const std::string& path) {
  if (IsHdf5File(path)) return ReadHdf5SolverState(path);
  SolverState state;
  ReadProtoFromBinaryFile(path, &state);
  return state;
}

/// A random engine as a .solverstate holds it (the standard's text form).
std::string EngineText(const RandomEngine& engine) {
  std::ostringstream text;
  text << engine;
  return text.str();
}

/// Sets `engine` from `text`; a text that does not parse is an Error
/// naming `what`.
void ReadEngine(const std::string& text, RandomEngine* engine, const std::string& what) {
  std::istringstream in(text);
  in >> *engine;
  DEMI_CHECK(!in.fail(), what, " is corrupt");
}

}  // namespace

std::string Solver::SnapshotFilename(const std::string& extension) const {
  return StrCat(param_.snapshot_prefix(), "_iter_", iter_, extension);
}

std::vector<RandomEngine*> Solver::RandomEngines() {
  std::vector<RandomEngine*> engines;
  for (const auto& layer : net_->layers()) engines.push_back(layer->rng());
  for (const auto& test_net : test_nets_) {
    for (const auto& layer : test_net->layers()) engines.push_back(layer->rng());
  }
  return engines;
}

void Solver::Snapshot() {
  last_snapshot_iter_ = iter_;
  if (!is_root()) return;  // replicas hold the same state; the root writes it
  if (param_.snapshot_prefix().empty()) {
    LOG(WARNING) << "snapshot_prefix is not set; not snapshotting iteration " << iter_;
    return;
  }
  NetParameter net_param;
  net_->ToProto(&net_param, param_.snapshot_diff());
  std::string model_filename;
  if (param_.snapshot_format() == SolverParameter::HDF5) {
    model_filename = SnapshotFilename(".caffemodel.h5");
    LOG(INFO) << "Snapshotting to HDF5 file " << model_filename;
    WriteHdf5Weights(net_param, model_filename);
  } else {
    model_filename = SnapshotFilename(".caffemodel");
    LOG(INFO) << "Snapshotting to binary proto file " << model_filename;
    WriteProtoToBinaryFile(net_param, model_filename);
  }
  SnapshotSolverState(model_filename);
}

void Solver::SnapshotSolverState(const std::string& model_filename) {
  SolverState state;
  state.set_iter(iter_);
  state.set_learned_net(model_filename);
  state.set_current_step(CurrentStep(param_, iter_));
  for (const auto& blob : history_) blob->ToProto(state.add_history());
  loss_scaler_.Save(&state);
  // During the tests, the test nets' streams from before them (as their
  // read positions): a resume runs those tests again.
  const std::vector<RandomEngine*> engines = RandomEngines();
  const size_t num_train = net_->layers().size();
  for (size_t i = 0; i < engines.size(); ++i) {
    state.add_rng_state(
        EngineText(testing_ && i >= num_train ? test_start_engines_[i - num_train] : *engines[i]));
  }
  for (DataReadPosition& position : SnapshotReadPositions()) {
    state.add_data_position()->Swap(&position);
  }
  if (context_.num_replicas > 1) {
    state.mutable_replica_state()->CopyFrom(gathered_.replica_state());
  }
  state.set_random_seed(context_.seed);
  for (float loss : losses_) state.add_loss_window(loss);
  if (param_.snapshot_format() == SolverParameter::HDF5) {
    const std::string state_filename = SnapshotFilename(".solverstate.h5");
    LOG(INFO) << "Snapshotting solver state to HDF5 file " << state_filename;
    WriteHdf5SolverState(state, state_filename);
    return;
  }
  const std::string state_filename = SnapshotFilename(".solverstate");
  LOG(INFO) << "Snapshotting solver state to binary proto file " << state_filename;
  WriteProtoToBinaryFile(state, state_filename);
}

std::vector<DataReadPosition> Solver::TestReadPositions() const {
  std::vector<DataReadPosition> positions;
  for (size_t i = 0; i < test_nets_.size(); ++i) {
    for (DataReadPosition& position :
         test_nets_[i]->SaveReadPositions(static_cast<int>(i) + 1, 0)) {
      positions.push_back(std::move(position));
    }
  }
  return positions;
}

std::vector<DataReadPosition> Solver::SnapshotReadPositions() const {
  // Replication: without a gather this iteration (a direct call), the
  // other replicas' positions are unknown and they resume from the start.
  std::vector<DataReadPosition> positions =
      context_.num_replicas > 1 && !gathered_.replica_state().empty()
          ? std::vector<DataReadPosition>(gathered_.data_position().begin(),
                                          gathered_.data_position().end())
          : net_->SaveReadPositions(0, context_.replica);
  const std::vector<DataReadPosition> test = testing_ ? test_start_positions_ : TestReadPositions();
  positions.insert(positions.end(), test.begin(), test.end());
  return positions;
}

SolverState Solver::OwnReplicaState() {
  SolverState state;
  for (DataReadPosition& position : net_->SaveReadPositions(0, context_.replica)) {
    state.add_data_position()->Swap(&position);
  }
  ReplicaState* own = state.add_replica_state();
  own->set_replica(context_.replica);
  if (context_.replica != 0) {
    for (const auto& layer : net_->layers()) own->add_rng_state(EngineText(*layer->rng()));
  }
  const std::vector<std::vector<float>> stats =
      holds_averaged_stats_ ? own_stats_ : ComputedParamValues();
  for (const std::vector<float>& values : stats) {
    BlobProto* blob = own->add_computed_param();
    blob->mutable_shape()->add_dim(static_cast<int64_t>(values.size()));
    blob->mutable_data()->Add(values.begin(), values.end());
  }
  return state;
}

void Solver::RestoreOwnReplicaState(const SolverState& state, const std::string& state_file) {
  const auto& all = state.replica_state();
  // Every replica takes the same way (each reads the same state): their
  // statistics are averaged together, or not, at the next test.
  if (all.size() != context_.num_replicas) {
    LOG_IF(WARNING, is_root())
        << "'" << state_file << "' holds the own state (random streams, BatchNorm statistics) of "
        << all.size() << " replica(s), this run has " << context_.num_replicas
        << ": the replicas' Dropout masks and random DummyData start afresh and their BatchNorm "
        << "statistics from the average, so the resume is approximate";
    return;
  }
  const auto own = std::find_if(all.begin(), all.end(), [&](const ReplicaState& replica) {
    return replica.replica() == context_.replica;
  });
  DEMI_CHECK(own != all.end(), "'", state_file, "' holds the own state of ", all.size(),
             " replicas, but none of replica ", context_.replica, "; it is corrupt");
  const auto& layers = net_->layers();
  if (context_.replica != 0) {
    DEMI_CHECK(own->rng_state_size() == static_cast<int>(layers.size()), "'", state_file,
               "' holds ", own->rng_state_size(), " random states for replica ", context_.replica,
               ", but the train net has ", layers.size(),
               " layers; resume with the net that wrote it");
    for (size_t i = 0; i < layers.size(); ++i) {
      ReadEngine(
          own->rng_state(static_cast<int>(i)), layers[i]->rng(),
          StrCat("random state ", i, " of replica ", context_.replica, " in '", state_file, "'"));
    }
  }
  std::vector<std::vector<float>> stats = ComputedParamValues();
  DEMI_CHECK(own->computed_param_size() == static_cast<int>(stats.size()), "'", state_file,
             "' holds ", own->computed_param_size(), " BatchNorm statistics blobs for replica ",
             context_.replica, ", but the train net has ", stats.size(),
             "; resume with the net that wrote it");
  for (size_t b = 0; b < stats.size(); ++b) {
    const auto& saved = own->computed_param(static_cast<int>(b)).data();
    DEMI_CHECK(saved.size() == static_cast<int>(stats[b].size()), "BatchNorm statistics blob ", b,
               " of replica ", context_.replica, " in '", state_file, "' holds ", saved.size(),
               " values, but the train net's has ", stats[b].size());
    stats[b].assign(saved.begin(), saved.end());
  }
  // The net holds the snapshot's average (its weights), which tests at
  // this iteration use; the replica's own go back before its next pass.
  own_stats_ = std::move(stats);
  holds_averaged_stats_ = true;
}

void Solver::RestoreStreams(const SolverState& state, const std::string& state_file) {
  const std::vector<RandomEngine*> engines = RandomEngines();
  const size_t num_train = net_->layers().size();
  const size_t num_states = static_cast<size_t>(state.rng_state_size());
  if (num_states == 0) {
    LOG(INFO) << "'" << state_file << "' holds no random states; random streams start afresh";
    return;
  }
  DEMI_CHECK(num_states >= num_train, "'", state_file, "' holds ", num_states,
             " random states, but the train net has ", num_train,
             " layers; resume with the net that wrote it");
  // Test nets may have changed since; their streams then start afresh.
  const size_t restore = num_states == engines.size() ? num_states : num_train;
  if (restore < engines.size()) {
    LOG(WARNING) << "'" << state_file << "' holds " << num_states - num_train
                 << " random states for test net layers, but the test nets have "
                 << engines.size() - num_train << " layers; their streams start afresh";
  }
  for (size_t i = 0; i < restore; ++i) {
    ReadEngine(state.rng_state(static_cast<int>(i)), engines[i],
               StrCat("random state ", i, " in '", state_file, "'"));
  }
}

void Solver::RestoreReadPositions(const SolverState& state, const std::string& state_file) {
  const std::vector<DataReadPosition> saved(state.data_position().begin(),
                                            state.data_position().end());
  if (saved.empty()) {
    if (is_root() && (!net_->SaveReadPositions(0, 0).empty() || !TestReadPositions().empty())) {
      LOG(WARNING) << "'" << state_file << "' holds no data read positions (Caffe's states and "
                   << "ours before 2026-11 hold none): "
                   << "the data layers read from their beginning, so the resumed run trains on "
                   << "other batches than an uninterrupted one would";
    }
    return;
  }
  std::vector<DataReadPosition> train;
  int saved_replicas = context_.num_replicas;
  for (const DataReadPosition& position : saved) {
    if (position.net() != 0) continue;
    train.push_back(position);
    saved_replicas = position.num_replicas();
  }
  if (saved_replicas != context_.num_replicas) {
    // Replica r read every R-th block of the stream: with another count no
    // stream goes on as it was. Every replica goes on from where the
    // furthest one stopped (the end of the last global batch), counting its
    // blocks afresh.
    std::vector<DataReadPosition> furthest;
    for (const DataReadPosition& position : train) {
      auto same = std::find_if(furthest.begin(), furthest.end(), [&](const auto& other) {
        return other.layer() == position.layer();
      });
      if (same == furthest.end()) {
        furthest.push_back(position);
      } else if (position.stream_position() > same->stream_position()) {
        *same = position;
      }
    }
    for (DataReadPosition& position : furthest) {
      position.set_replica(context_.replica);
      position.set_num_replicas(context_.num_replicas);
      position.set_stream_position(0);
    }
    train = std::move(furthest);
    LOG_IF(WARNING, is_root()) << "'" << state_file << "' was written by " << saved_replicas
                               << " replica(s), this run has " << context_.num_replicas
                               << ": the data streams go on from where they stopped, but the "
                               << "batches are made up differently, so the resume is approximate";
  }
  net_->RestoreReadPositions(train, 0, context_.replica, StrCat("'", state_file, "'"));
  for (size_t i = 0; i < test_nets_.size(); ++i) {
    test_nets_[i]->RestoreReadPositions(saved, static_cast<int>(i) + 1, 0,
                                        StrCat("'", state_file, "'"));
  }
}

bool SeedFromSolverState(const std::string& state_file, SolverParameter* param) {
  if (param->random_seed() >= 0) return false;
  SolverState state;
  try {
    state = ReadSolverState(state_file);
  } catch (const Error&) {
    return false;  // Restore says what is wrong with it
  }
  if (!state.has_random_seed()) return false;
  param->set_random_seed(state.random_seed());
  LOG(INFO) << "Resuming with the random seed of the run that wrote '" << state_file
            << "': " << state.random_seed();
  return true;
}

void Solver::Restore(const std::string& state_file) {
  const std::string weights_hint =
      StrCat(state_file, " is a weights file (NetParameter), not a .solverstate; use --weights");
  DEMI_CHECK(std::filesystem::path(state_file).extension() != ".caffemodel" &&
                 !EndsWith(state_file, ".caffemodel.h5"),
             weights_hint);
  const SolverState state = ReadSolverState(state_file);
  // What a pass since the last test or snapshot left is not this state's.
  holds_averaged_stats_ = false;
  own_stats_.clear();
  gathered_.Clear();
  DEMI_CHECK(IsHdf5File(state_file) || !IsWeightsFile(state_file, state), weights_hint);
  DEMI_CHECK(state.iter() >= 0, "'", state_file, "' holds iteration ", state.iter(),
             "; a solver state's iteration is 0 or more");
  if (state.has_learned_net()) {
    std::string model = state.learned_net();
    if (!std::filesystem::exists(model)) {
      // The snapshot files may have moved together: look beside the state.
      namespace fs = std::filesystem;
      const std::string beside =
          (fs::path(state_file).parent_path() / fs::path(model).filename()).string();
      DEMI_CHECK(std::filesystem::exists(beside), "'", state_file, "' names the model '", model,
                 "', which exists neither there nor at '", beside, "'");
      model = beside;
    }
    try {
      const NetParameter weights = ReadWeightsFile(model);
      const std::vector<std::string> copied = net_->CopyTrainedLayersFrom(weights);
      net_->CheckWeightsMatch(model, weights, copied);
      // Unlike fine-tuning, a resume goes on from every layer's params.
      const std::string missing = net_->LayersWithoutWeights({copied.begin(), copied.end()});
      DEMI_CHECK(missing.empty(), "it holds no weights for layer(s) ", missing,
                 " of the train net, which a resume needs (to start from the weights it holds, "
                 "give it as --weights)");
    } catch (const Error& error) {
      ThrowError(StrCat("cannot restore the model '", model, "': ", error.what()));
    }
  }
  iter_ = state.iter();
  current_step_ = CurrentStep(param_, iter_);
  // Caffe stores the step of the last update, one iteration behind.
  const int previous_step = iter_ > 0 ? CurrentStep(param_, iter_ - 1) : current_step_;
  if (state.current_step() != current_step_ && state.current_step() != previous_step) {
    LOG(WARNING) << "'" << state_file << "' was at lr step " << state.current_step()
                 << "; this solver's lr policy puts iteration " << iter_ << " at step "
                 << current_step_ << ", which it follows";
  }
  const int num_params = static_cast<int>(net_->learnable_params().size());
  DEMI_CHECK(state.history_size() == static_cast<int>(history_.size()), "'", state_file, "' holds ",
             state.history_size(), " history blobs, but the ", type(), " solver keeps ",
             history_.size(), " (", history_sets_, " for each of ", num_params,
             " learnable params)");
  for (size_t i = 0; i < history_.size(); ++i) {
    const BlobProto& proto = state.history(static_cast<int>(i));
    DEMI_CHECK(history_[i]->ShapeEquals(proto), "history blob ", i, " in '", state_file,
               "' has shape ", ShapeString(ShapeFromProto(proto)), " but learnable param ",
               i % num_params, " has shape ", history_[i]->shape_string());
    history_[i]->FromProto(proto, false);
  }
  // rng_state holds the root's streams; the other replicas' are their own.
  if (context_.num_replicas > 1) RestoreOwnReplicaState(state, state_file);
  if (context_.replica == 0) RestoreStreams(state, state_file);
  if (state.has_random_seed() && static_cast<uint32_t>(state.random_seed()) != context_.seed) {
    LOG(WARNING) << "'" << state_file << "' was written by a run with random seed "
                 << state.random_seed() << ", this solver's is " << context_.seed
                 << ": the data are shuffled and augmented otherwise than in an uninterrupted "
                 << "run; set random_seed: " << state.random_seed()
                 << " in the solver to resume it exactly (the train tool does so itself when "
                 << "the solver sets none)";
  }
  losses_.assign(state.loss_window().begin(), state.loss_window().end());
  keep_loss_window_ = true;
  loss_scaler_.Restore(state, state_file);
  if (loss_scaler_.enabled()) net_->SetGradientScale(loss_scaler_.scale());
  RestoreReadPositions(state, state_file);
  const auto python =
      std::find_if(net_->layers().begin(), net_->layers().end(),
                   [](const auto& layer) { return layer->type() == std::string("Python"); });
  LOG_IF(WARNING, python != net_->layers().end())
      << "The train net has Python layers: their own state (a data layer's place in its list, "
      << "say) is theirs to keep, not the .solverstate's; they go on from their set-up, as in "
      << "Caffe";
  LOG(INFO) << "Restored iteration " << iter_ << " from " << state_file;
}

}  // namespace demi
