// Which layers and blobs of a net need backward (Caffe's analysis): from the
// inputs and learning params forward, pruned to what reaches a loss, or
// everything with force_backward.
#include <set>
#include <string>

#include "demi/net.hpp"

namespace demi {

void Net::AnalyzeBackward(const NetParameter& param) {
  layer_need_backward_.assign(layers_.size(), false);
  MarkBackwardFromInputsAndParams();
  PruneBackwardOutsideLosses();
  if (param.force_backward()) ForceBackward();
  for (size_t layer_id = 0; layer_id < layers_.size(); ++layer_id) {
    layers_[layer_id]->set_runs_backward(phase_ == TRAIN && layer_need_backward_[layer_id]);
    LOG(INFO) << layer_names_[layer_id]
              << (layer_need_backward_[layer_id] ? " needs" : " does not need")
              << " backward computation.";
  }
}

void Net::MarkBackwardFromInputsAndParams() {
  // In layer order: a layer needs backward if any input needs it or a param
  // learns.
  for (size_t layer_id = 0; layer_id < layers_.size(); ++layer_id) {
    Layer& layer = *layers_[layer_id];
    // The layer's own copy: a layer may add param specs (BatchNorm fixes its
    // statistics' lr_mult at 0).
    const LayerParameter& layer_param = layer.layer_param();
    bool need_backward = false;
    for (size_t b = 0; b < bottom_id_vecs_[layer_id].size(); ++b) {
      bool bottom_needs = blob_need_backward_[bottom_id_vecs_[layer_id][b]];
      if (layer_param.propagate_down_size() > 0) {
        bottom_needs = layer_param.propagate_down(static_cast<int>(b));
      }
      bottom_need_backward_[layer_id][b] = bottom_needs;
      need_backward |= bottom_needs;
    }
    const int num_params = static_cast<int>(layer.blobs().size());
    DEMI_CHECK(layer_param.param_size() <= num_params, "layer '", layer_param.name(), "' gives ",
               layer_param.param_size(), " param specs but has ", num_params, " params");
    for (int param_id = 0; param_id < num_params; ++param_id) {
      const bool learns =
          param_id >= layer_param.param_size() || layer_param.param(param_id).lr_mult() != 0;
      layer.set_param_propagate_down(param_id, learns);
      need_backward |= learns;
    }
    for (int blob_id : top_id_vecs_[layer_id]) {
      blob_need_backward_[blob_id] = blob_need_backward_[blob_id] || need_backward;
    }
    layer_need_backward_[layer_id] = need_backward;
  }
}

void Net::PruneBackwardOutsideLosses() {
  // In reverse order: drop layers that contribute to no loss, and gradients
  // into blobs whose consumers all skip backward.
  std::set<std::string> blobs_under_loss;
  std::set<std::string> blobs_skip_backward;
  for (int layer_id = static_cast<int>(layers_.size()) - 1; layer_id >= 0; --layer_id) {
    Layer& layer = *layers_[layer_id];
    bool contributes_loss = false;
    bool skip_propagate_down = true;
    for (size_t i = 0; i < top_id_vecs_[layer_id].size(); ++i) {
      const std::string& name = blob_names_[top_id_vecs_[layer_id][i]];
      if (layer.loss(static_cast<int>(i)) != 0.0f || blobs_under_loss.count(name)) {
        contributes_loss = true;
      }
      if (!blobs_skip_backward.count(name)) skip_propagate_down = false;
    }
    if (layer_need_backward_[layer_id] && skip_propagate_down) {
      layer_need_backward_[layer_id] = false;
      bottom_need_backward_[layer_id].assign(bottom_need_backward_[layer_id].size(), false);
    }
    if (!contributes_loss) layer_need_backward_[layer_id] = false;
    for (size_t i = 0; i < bottom_id_vecs_[layer_id].size(); ++i) {
      const std::string& name = blob_names_[bottom_id_vecs_[layer_id][i]];
      if (contributes_loss) {
        blobs_under_loss.insert(name);
      } else {
        bottom_need_backward_[layer_id][i] = false;
      }
      if (!bottom_need_backward_[layer_id][i]) blobs_skip_backward.insert(name);
    }
  }
}

void Net::ForceBackward() {
  for (size_t layer_id = 0; layer_id < layers_.size(); ++layer_id) {
    Layer& layer = *layers_[layer_id];
    layer_need_backward_[layer_id] = true;
    for (size_t i = 0; i < bottom_need_backward_[layer_id].size(); ++i) {
      const bool allowed = layer.AllowForceBackward(static_cast<int>(i));
      bottom_need_backward_[layer_id][i] = bottom_need_backward_[layer_id][i] || allowed;
      const int blob_id = bottom_id_vecs_[layer_id][i];
      blob_need_backward_[blob_id] = blob_need_backward_[blob_id] || allowed;
    }
    for (size_t p = 0; p < layer.blobs().size(); ++p) {
      layer.set_param_propagate_down(static_cast<int>(p), true);
    }
  }
}

}  // namespace demi
