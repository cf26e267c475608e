#ifndef DEMI_HDF5_SNAPSHOTS_HPP_
#define DEMI_HDF5_SNAPSHOTS_HPP_

// Caffe's HDF5 snapshots (solver snapshot_format: HDF5), read and written as
// the protos the binary ones hold:
// - weights (.caffemodel.h5): group data/<layer> for every layer, holding
//   datasets "0", "1", ... of float32, one per param, and diff/<layer> alike
//   where the weights carry diffs (snapshot_diff). A layer name with '/'
//   (GoogLeNet's "inception_3a/1x1") nests its groups.
// - solver state (.solverstate.h5): datasets iter, learned_net and
//   current_step, and group history of "0", "1", ..., as Caffe writes them;
//   plus demitasse_state, the rest of our SolverState (random streams, read
//   positions, seed, loss window) as its binary proto bytes, which Caffe
//   ignores.
#include <string>

#include "demi/proto/demi.pb.h"

namespace demi {

/// Writes `weights` (Net::ToProto's, with diffs where it kept them) to
/// `path` atomically.
void WriteHdf5Weights(const NetParameter& weights, const std::string& path);
/// Reads HDF5 weights as a NetParameter of the layers that hold params. A
/// param the file leaves out below the layer's last one (Caffe writes a
/// shared param under its owner only) reads as a placeholder blob:
/// IsAbsentParam.
NetParameter ReadHdf5Weights(const std::string& path);
bool IsAbsentParam(const BlobProto& blob);

void WriteHdf5SolverState(const SolverState& state, const std::string& path);
SolverState ReadHdf5SolverState(const std::string& path);

}  // namespace demi

#endif  // DEMI_HDF5_SNAPSHOTS_HPP_
