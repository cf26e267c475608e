// Which layers a net holds for its state (phase, level, stages): Caffe's
// include and exclude rules.
#include <set>

#include "demi/net.hpp"

namespace demi {

bool Net::StateMeetsRule(const NetState& state, const NetStateRule& rule,
                         const std::string& layer_name) {
  if (rule.has_phase() && rule.phase() != state.phase()) return false;
  if (rule.has_min_level() && state.level() < rule.min_level()) return false;
  if (rule.has_max_level() && state.level() > rule.max_level()) return false;
  const std::set<std::string> stages(state.stage().begin(), state.stage().end());
  for (const std::string& stage : rule.stage()) {
    if (!stages.count(stage)) return false;
  }
  for (const std::string& stage : rule.not_stage()) {
    if (stages.count(stage)) return false;
  }
  return true;
}

void Net::FilterNet(const NetParameter& param, NetParameter* filtered) {
  filtered->CopyFrom(param);
  filtered->clear_layer();
  for (const LayerParameter& layer : param.layer()) {
    DEMI_CHECK(layer.include_size() == 0 || layer.exclude_size() == 0, "layer '", layer.name(),
               "' specifies both include and exclude rules; give one or the other");
    bool included = layer.include_size() == 0;
    for (const NetStateRule& rule : layer.exclude()) {
      if (StateMeetsRule(param.state(), rule, layer.name())) included = false;
    }
    for (const NetStateRule& rule : layer.include()) {
      if (StateMeetsRule(param.state(), rule, layer.name())) included = true;
    }
    if (included) filtered->add_layer()->CopyFrom(layer);
  }
}

}  // namespace demi
