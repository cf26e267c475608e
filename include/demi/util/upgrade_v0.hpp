#ifndef DEMI_UTIL_UPGRADE_V0_HPP_
#define DEMI_UTIL_UPGRADE_V0_HPP_

#include "demi/proto/demi.pb.h"

namespace demi {

// The oldest (V0) net format: each entry of NetParameter's `layers` field
// (V1LayerParameter) holds only bottoms and tops, with the layer itself in a
// nested V0LayerParameter (type as a lowercase string such as "conv", every
// option as a flat field). Padding was a layer of its own. Meant to be
// applied by UpgradeNetAsNeeded before the V1 step, which turns the result
// into the current format.

/// Whether any entry of the net's `layers` field nests a V0 layer.
bool NetNeedsV0Upgrade(const NetParameter& param);

/// Copies `in` to `out` with every nested V0 layer converted to a V1 layer:
/// "padding" layers are dropped and their pad folded into the conv or pool
/// layer that reads their output; the V0 type string becomes the V1 enum;
/// the flat fields move into the per-type parameters (num_output, biasterm,
/// fillers, pad, kernelsize, group and stride to convolution_param; pool,
/// pad, kernelsize and stride to pooling_param; source, batchsize and
/// rand_skip to the data parameters, with scale, meanfile, cropsize and
/// mirror to transform_param; ...); blobs, blobs_lr and weight_decay are kept.
/// `layers` entries without a nested V0 layer are copied unchanged. An
/// unknown V0 type, a padding layer whose output feeds anything but one conv
/// or pool layer, or a V0 field the layer's type has no use for throws an
/// Error naming the layer.
void UpgradeV0Net(const NetParameter& in, NetParameter* out);

}  // namespace demi

#endif  // DEMI_UTIL_UPGRADE_V0_HPP_
