// Where the net's data layers read next: saved into a .solverstate and put
// back on resume (Layer::SaveReadPosition).
#include "demi/net.hpp"

namespace demi {

std::vector<DataReadPosition> Net::SaveReadPositions(int net, int replica) const {
  std::vector<DataReadPosition> positions;
  for (const auto& layer : layers_) {
    DataReadPosition position;
    if (!layer->SaveReadPosition(&position)) continue;
    position.set_net(net);
    position.set_replica(replica);
    positions.push_back(std::move(position));
  }
  return positions;
}

void Net::RestoreReadPositions(const std::vector<DataReadPosition>& positions, int net, int replica,
                               const std::string& from) {
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = *layers_[i];
    DataReadPosition current;
    if (!layer.SaveReadPosition(&current)) continue;
    const DataReadPosition* saved = nullptr;
    for (const DataReadPosition& position : positions) {
      if (position.net() == net && position.replica() == replica &&
          position.layer() == layer_names_[i]) {
        saved = &position;
      }
    }
    if (!saved) {
      LOG(WARNING) << layer.type() << " layer '" << layer_names_[i] << "' of net '" << name_
                   << "': " << from << " holds no read position for it (replica " << replica
                   << "); it reads from its beginning";
    } else if (saved->type() != layer.type()) {
      LOG(WARNING) << layer.type() << " layer '" << layer_names_[i] << "' of net '" << name_
                   << "': " << from << " holds the read position of a " << saved->type()
                   << " layer of that name; it reads from its beginning";
    } else {
      layer.RestoreReadPosition(*saved);
    }
  }
}

}  // namespace demi
