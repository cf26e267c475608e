#ifndef DEMI_UTIL_UPGRADE_PROTO_HPP_
#define DEMI_UTIL_UPGRADE_PROTO_HPP_

#include <string>

#include "demi/proto/demi.pb.h"

namespace demi {

// Every conversion of a legacy format lives here, applied once at load.

/// Whether the net uses top-level `input` / `input_shape` / `input_dim`.
bool NetNeedsInputUpgrade(const NetParameter& param);
/// Moves top-level inputs into an Input layer at the front of the net.
void UpgradeNetInput(NetParameter* param);

/// Whether a Data or ImageData layer uses the old transformation fields
/// (scale, mean_file, crop_size, mirror inside data_param/image_data_param).
bool NetNeedsDataTransformationUpgrade(const NetParameter& param);
/// Moves those fields into each layer's transform_param, as Caffe does.
void UpgradeNetDataTransformation(NetParameter* param);

/// Applies every upgrade the net needs, logging one line per upgrade with
/// `source` (a path or a description). Returns true if anything changed.
bool UpgradeNetAsNeeded(const std::string& source, NetParameter* param);

/// Reads a net prototxt and upgrades it.
void ReadNetParamsFromTextFile(const std::string& path, NetParameter* param);
/// Reads a binary net (.caffemodel) and upgrades it.
void ReadNetParamsFromBinaryFile(const std::string& path, NetParameter* param);

}  // namespace demi

#endif  // DEMI_UTIL_UPGRADE_PROTO_HPP_
