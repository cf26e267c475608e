// Fusing in-place chains (NetParameter.fuse_layers, on by default): a layer
// may absorb the layer that reads its top 0 next, in place, then the one
// after that, and compute them all in its own passes over the blob. A
// BatchNorm absorbs the Scale and the ReLU after it (ResNet's triples): 3
// passes over the blob forward and 2 backward instead of 7 and 6. Each
// absorbed layer stays in the net, under its name, owning its
// params (so .caffemodel, .solverstate, Python and the solver see no
// difference); its Forward, Backward and Replay do nothing, and it gives up
// its buffers. What changes: the absorber's time in `time` includes the
// absorbed layer's, and a forward that stops between the two leaves the blob
// as both would.
#include <algorithm>

#include "demi/net.hpp"

namespace demi {

int Net::AbsorbableNext(int i, int after) const {
  if (top_id_vecs_[i].empty()) return -1;
  const int blob = top_id_vecs_[i][0];
  for (int j = after + 1; j < static_cast<int>(layers_.size()); ++j) {
    const auto& bottoms = bottom_id_vecs_[j];
    if (std::find(bottoms.begin(), bottoms.end(), blob) == bottoms.end()) continue;
    // The first reader: a split would stand here if another layer read it too.
    const Layer& next = *layers_[j];
    const bool in_place =
        bottoms.size() == 1 && top_id_vecs_[j].size() == 1 && top_id_vecs_[j][0] == blob;
    const bool plain = next.loss(0) == 0.0f && next.layer_param().propagate_down_size() == 0;
    return in_place && plain ? j : -1;
  }
  return -1;
}

void Net::FuseLayers(bool fuse) {
  absorbed_layers_.assign(layers_.size(), {});
  if (!fuse) return;
  int fused = 0;
  for (int i = 0; i < static_cast<int>(layers_.size()); ++i) {
    if (layers_[i]->absorbed()) continue;
    // The chain in place on layer i's top: each next reader, while it takes it.
    for (int next = AbsorbableNext(i, i); next >= 0 && layers_[i]->Absorb(layers_[next].get());
         next = AbsorbableNext(i, next)) {
      layers_[next]->set_absorbed_by(layer_names_[i]);
      absorbed_layers_[i].push_back(next);
      // The absorber's Backward computes the absorbed layer's param
      // gradients: it runs wherever the absorbed layer's would (its own
      // bottoms still get gradients only where they need them).
      if (layer_need_backward_[next] && !layer_need_backward_[i]) {
        layer_need_backward_[i] = true;
        layers_[i]->set_runs_backward(layers_[next]->runs_backward());
      }
      layers_[i]->Reshape(bottom_vecs_[i], top_vecs_[i]);  // sizes what it now keeps
      VLOG(1) << layer_names_[i] << " runs " << layer_names_[next] << " (" << layers_[next]->type()
              << ") in its own passes";
      ++fused;
    }
  }
  if (fused > 0) {
    LOG(INFO) << "Net '" << name_ << "': " << fused
              << " in-place layers run inside a layer before them (fuse_layers; "
              << "each: -v=1)";
  }
}

}  // namespace demi
