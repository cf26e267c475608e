#ifndef DEMI_UTIL_UPGRADE_V1_HPP_
#define DEMI_UTIL_UPGRADE_V1_HPP_

#include <string>

#include "demi/proto/demi.pb.h"

namespace demi {

// The legacy V1 net format: NetParameter's `layers` field of V1LayerParameter
// (type as an enum, per-blob blobs_lr and weight_decay), which .caffemodel
// files written by Caffe before 2015 use. Meant to be applied by
// UpgradeNetAsNeeded, with the other legacy conversions.

/// Whether the net uses the V1 `layers` field.
bool NetNeedsV1Upgrade(const NetParameter& param);

/// Copies `in` to `out` with every V1 layer converted to a LayerParameter:
/// name, type (enum -> Caffe's type string), bottoms, tops, blobs, param
/// names and share modes, blobs_lr -> lr_mult, weight_decay -> decay_mult,
/// loss_weight, include/exclude rules and the per-type parameters V1 carries.
/// A net that has both `layer` and `layers`, a V1 layer of type NONE, or a
/// nested V0 layer definition (UpgradeV0Net converts those first) throws an
/// Error naming the layer.
void UpgradeV1Net(const NetParameter& in, NetParameter* out);

/// The current type string of a V1 layer type ("Convolution" for CONVOLUTION).
std::string V1LayerTypeName(V1LayerParameter::LayerType type);

}  // namespace demi

#endif  // DEMI_UTIL_UPGRADE_V1_HPP_
