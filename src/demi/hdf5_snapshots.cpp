#include "demi/hdf5_snapshots.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "demi/blob.hpp"
#include "demi/data/hdf5.hpp"

namespace demi {

namespace {

const char kExtraState[] = "demitasse_state";

void AddBlob(Hdf5FileImage* file, const std::string& name, const BlobProto& blob, bool diff) {
  const auto& values = diff ? blob.diff() : blob.data();
  file->AddFloats(name, ShapeFromProto(blob), values.data());
}

/// Reads dataset `name` of `path` into `blob` (its shape, even with no
/// axes, and its values).
void ReadBlob(const std::string& path, const std::string& name, BlobProto* blob) {
  std::vector<float> values;
  const std::vector<int64_t> shape = ReadHdf5Dataset(path, name, &values, true);
  BlobShape* dims = blob->mutable_shape();
  for (int64_t dim : shape) dims->add_dim(dim);
  *blob->mutable_data() = {values.begin(), values.end()};
}

bool IsParamIndex(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

/// Adds the layers under group `group` of the weights file `path` to
/// `weights`: members named by a number are the params of the layer named
/// `layer`; others continue a layer name that holds a '/'.
void ReadLayers(const std::string& path, const std::string& group, const std::string& layer,
                NetParameter* weights) {
  const std::vector<std::string> members = Hdf5GroupMembers(path, group);
  int params = 0;  // one past the last param index
  for (const std::string& member : members) {
    // A group continues a layer's name (one with '/'); a dataset is a param.
    if (Hdf5IsGroup(path, group + "/" + member)) {
      ReadLayers(path, group + "/" + member, layer.empty() ? member : layer + "/" + member,
                 weights);
      continue;
    }
    DEMI_CHECK(!layer.empty() && IsParamIndex(member) && member.size() < 6, "HDF5 weights '", path,
               "': dataset '", group, "/", member, "' is not a param of a layer (", group, "/0, ",
               group, "/1, ...)");
    params = std::max(params, std::stoi(member) + 1);
  }
  // A layer without params, or whose params another layer owns, takes
  // nothing.
  if (params == 0) return;
  LayerParameter* target = weights->add_layer();
  target->set_name(layer);
  for (int i = 0; i < params; ++i) {
    BlobProto* blob = target->add_blobs();
    if (std::find(members.begin(), members.end(), StrCat(i)) == members.end()) {
      blob->mutable_shape()->add_dim(-1);  // IsAbsentParam
      continue;
    }
    ReadBlob(path, StrCat(group, "/", i), blob);
  }
}

}  // namespace

void WriteHdf5Weights(const NetParameter& weights, const std::string& path) {
  Hdf5FileImage file;
  file.AddGroup("data");
  bool any_diff = false;
  for (const LayerParameter& layer : weights.layer()) {
    file.AddGroup("data/" + layer.name());
    for (int i = 0; i < layer.blobs_size(); ++i) {
      AddBlob(&file, StrCat("data/", layer.name(), "/", i), layer.blobs(i), false);
      any_diff = any_diff || layer.blobs(i).diff_size() > 0;
    }
  }
  if (any_diff) {
    file.AddGroup("diff");
    for (const LayerParameter& layer : weights.layer()) {
      file.AddGroup("diff/" + layer.name());
      for (int i = 0; i < layer.blobs_size(); ++i) {
        if (layer.blobs(i).diff_size() == 0) continue;
        AddBlob(&file, StrCat("diff/", layer.name(), "/", i), layer.blobs(i), true);
      }
    }
  }
  file.Save(path);
}

bool IsAbsentParam(const BlobProto& blob) {
  return blob.shape().dim_size() == 1 && blob.shape().dim(0) == -1;
}

NetParameter ReadHdf5Weights(const std::string& path) {
  DEMI_CHECK(Hdf5HasMember(path, "data") || !Hdf5HasMember(path, "iter"), "'", path,
             "' is an HDF5 solver state, not weights; use --snapshot to resume from it");
  NetParameter weights;
  ReadLayers(path, "data", "", &weights);
  return weights;
}

void WriteHdf5SolverState(const SolverState& state, const std::string& path) {
  Hdf5FileImage file;
  file.AddInt("iter", state.iter());
  file.AddString("learned_net", state.learned_net());
  file.AddInt("current_step", state.current_step());
  file.AddGroup("history");
  for (int i = 0; i < state.history_size(); ++i) {
    AddBlob(&file, StrCat("history/", i), state.history(i), false);
  }
  SolverState extra = state;
  extra.clear_iter();
  extra.clear_learned_net();
  extra.clear_current_step();
  extra.clear_history();
  std::string bytes;
  DEMI_CHECK(extra.SerializeToString(&bytes), "cannot write '", path,
             "': its random states and read positions do not serialize");
  file.AddBytes(kExtraState, bytes);
  file.Save(path);
}

SolverState ReadHdf5SolverState(const std::string& path) {
  SolverState state;
  // Ours first: Caffe's fields then overwrite none of it.
  if (Hdf5HasMember(path, kExtraState)) {
    DEMI_CHECK(state.ParseFromString(ReadHdf5Bytes(path, kExtraState)), "HDF5 solver state '", path,
               "': its ", kExtraState, " is corrupt");
  }
  DEMI_CHECK(Hdf5HasMember(path, "iter"), "HDF5 file '", path,
             "' is no solver state: it has no 'iter' (HDF5 weights go to --weights)");
  state.set_iter(static_cast<int>(ReadHdf5Int(path, "iter")));
  if (Hdf5HasMember(path, "learned_net")) {
    state.set_learned_net(ReadHdf5String(path, "learned_net"));
  }
  if (Hdf5HasMember(path, "current_step")) {
    state.set_current_step(static_cast<int>(ReadHdf5Int(path, "current_step")));
  }
  const std::vector<std::string> history = Hdf5HasMember(path, "history")
                                               ? Hdf5GroupMembers(path, "history")
                                               : std::vector<std::string>{};
  for (size_t i = 0; i < history.size(); ++i) {
    const std::string name = StrCat("history/", i);
    DEMI_CHECK(Hdf5HasMember(path, name), "HDF5 solver state '", path, "' holds ", history.size(),
               " history datasets but no '", name, "'");
    ReadBlob(path, name, state.add_history());
  }
  return state;
}

}  // namespace demi
